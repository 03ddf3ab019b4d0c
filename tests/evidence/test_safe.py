"""Configuration snapshots keep settings and drop credentials, environment, commands and handlers."""

from __future__ import annotations

import pytest

from trialbook.evidence import (
    AgentResult,
    EvidenceSchemaError,
    dump_result,
    is_sensitive_key,
    safe_configuration,
)


@pytest.mark.parametrize(
    "key",
    [
        "env",
        "ENV",
        "environment",
        "envVars",
        "api_key",
        "apiKey",
        "X-Api-Key",
        "OPENAI_API_KEY",
        "token",
        "GH_TOKEN",
        "authToken",
        "githubtoken",
        "secret",
        "clientSecret",
        "password",
        "Authorization",
        "headers",
        "command",
        "args",
        "handler",
        "onPermissionHandler",
        "credentials",
        "privateKey",
    ],
)
def test_sensitive_keys(key: str) -> None:
    assert is_sensitive_key(key)


@pytest.mark.parametrize(
    "key",
    ["model", "max_tokens", "max_output_tokens", "tokenizer", "system_message", "tools", "base_url", "name"],
)
def test_ordinary_settings_are_kept(key: str) -> None:
    assert not is_sensitive_key(key)


def test_safe_configuration_drops_at_every_depth_and_keeps_the_rest() -> None:
    handler = print
    raw = {
        "model": "gpt-5.2",
        "max_tokens": 1000,
        "system_message": "",
        "reasoning_effort": None,
        "provider": {
            "type": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "API_KEY": "sk-1",
            "Headers": {"a": "b"},
        },
        "mcp_servers": {
            "bank": {
                "command": "node",
                "args": ["server.js"],
                "env": {"TOKEN": "x"},
                "tools": ["*"],
                "timeout": 5,
            }
        },
        "tools": [
            {
                "name": "get_balance",
                "description": "Read.",
                "parameters": {"type": "object"},
                "handler": handler,
            },
            handler,
            ("a", 1),
        ],
        "on_event": handler,
        "skills": {"banking", "legal"},
        "ratio": float("nan"),
        1: "not a string key",
    }
    assert safe_configuration(raw) == {
        "model": "gpt-5.2",
        "max_tokens": 1000,
        "system_message": "",
        "reasoning_effort": None,
        "provider": {"type": "openai", "base_url": "http://127.0.0.1:9/v1"},
        "mcp_servers": {"bank": {"tools": ["*"], "timeout": 5}},
        "tools": [
            {"name": "get_balance", "description": "Read.", "parameters": {"type": "object"}},
            ["a", 1],
        ],
    }
    assert raw["provider"]["API_KEY"] == "sk-1"  # type: ignore[index]  # the input is not modified


def test_a_snapshot_that_skipped_the_filter_is_refused() -> None:
    bad = AgentResult(
        agent_name="codex",
        agent_version=None,
        success=True,
        error=None,
        stop_reason=None,
        configuration={"model": "gpt-5", "servers": [{"name": "s", "env": {"A": "1"}}]},
    )
    with pytest.raises(EvidenceSchemaError, match=r"^result\.configuration\.servers\[0\]\.env: credentials"):
        dump_result(bad)
    good = AgentResult(
        agent_name="codex",
        agent_version=None,
        success=True,
        error=None,
        stop_reason=None,
        configuration=safe_configuration(bad.configuration or {}),
    )
    assert dump_result(good)["configuration"] == {"model": "gpt-5", "servers": [{"name": "s"}]}
