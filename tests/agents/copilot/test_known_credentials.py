"""Every credential a Copilot session is given is masked, wherever in its settings or env it was given."""

from __future__ import annotations

from pathlib import Path

from trialbook.agents.copilot import CopilotAgent, CopilotEval
from trialbook.agents.copilot._masked import known_credentials
from trialbook.masking import Masker

KEY = "sk-provider-0123456789"
HEADER = "hdr-secret-0123456789"
BEARER = "bearer-inner-0123456789"
MCP_TOKEN = "ghp_mcp0123456789abcdef"
MCP_HEADER = "mcp-header-0123456789"
AGENT_MCP = "agent-mcp-0123456789"
EXTRA = "extra-key-0123456789"
ENV_KEY = "env-openai-0123456789"


def config(tmp_path: Path) -> CopilotEval:
    agent = tmp_path / "x.agent.md"
    agent.write_text("---\ndescription: d\n---\nBody.\n")
    return CopilotEval(
        provider={
            "type": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key": KEY,
            "headers": {"X-Api-Key": HEADER, "Authorization": f"Bearer {BEARER}", "X-Org": "acme-corp"},
        },
        mcp_servers={
            "gh": {
                "type": "local",
                "command": "github-mcp-server",
                "args": ["stdio", "--toolsets", "repos"],
                "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": MCP_TOKEN, "LOG_LEVEL": "debug"},
            },
            "remote": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"authorization": MCP_HEADER},
            },
        },
        custom_agents=(
            {"name": "a", "prompt": "p", "mcp_servers": {"s": {"env": {"apiKey": AGENT_MCP}}}},
            str(agent),
        ),
        extra_config={"provider": {"api_key": EXTRA}, "max_tokens": 4096, "auth_mode": "none"},
    )


def test_every_credential_is_found_and_nothing_else(tmp_path: Path) -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": str(tmp_path),
        "OPENAI_API_KEY": ENV_KEY,
        "GIT_AUTHOR_NAME": "trialbook",
        "SSH_AUTH_SOCK": "/tmp/agent.sock",
        "TOKENIZERS_PARALLELISM": "false",
        "DISABLE_TOKEN_CACHE": "true",
        "KEY_FILE_OPTIONAL": "False",
    }
    found = set(known_credentials(config(tmp_path), env))
    assert found == {
        KEY,
        HEADER,
        f"Bearer {BEARER}",
        BEARER,
        MCP_TOKEN,
        MCP_HEADER,
        AGENT_MCP,
        EXTRA,
        ENV_KEY,
    }


def test_the_adapter_masks_them_with_the_token_variables(tmp_path: Path) -> None:
    adapter = CopilotAgent(config(tmp_path), environ={})
    secrets = adapter._secrets({"GH_TOKEN": "ghs_token0123456789", "PATH": "/usr/bin"})
    assert "ghs_token0123456789" in secrets and KEY in secrets and MCP_TOKEN in secrets
    assert "debug" not in secrets and "acme-corp" not in secrets and "stdio" not in secrets
    assert len(secrets) == len(set(secrets))


def test_an_empty_or_short_value_never_masks_ordinary_text() -> None:
    for value in ("", "abc"):
        adapter = CopilotAgent(CopilotEval(provider={"type": "openai", "api_key": value}), environ={})
        assert Masker(adapter._secrets({})).text("abc and more") == "abc and more"
