"""Tests a user could copy: real agent CLIs against the ``loopback_api`` scripted model.

Each test hands an agent the settings the fixture gives for it (Claude Code's ``ANTHROPIC_BASE_URL``,
Codex's ``base_url``, Copilot's bring-your-own-key ``provider``) and checks what the agent really did.
Replace the ``ensure_cli`` paths with your own installed CLIs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.clis import CACHE, ensure_cli
from trialbook.agents import AgentSpec
from trialbook.agents.copilot import CopilotEval
from trialbook.pytest_plugin._fixtures import AgentEval, CopilotEvalRunner
from trialbook.testing import ModelServer, say, shell, use_tool

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio]

LoopbackApi = Callable[..., ModelServer]


def base_env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "work").mkdir(exist_ok=True)
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(tmp_path / "home")}


async def test_claude_code_runs_the_scripted_command(
    agent_eval: AgentEval, loopback_api: LoopbackApi, tmp_path: Path
) -> None:
    api = loopback_api([shell("echo hi > hi.txt"), say("done")])
    claude = AgentSpec("claude-code", {"binary": str(ensure_cli("@anthropic-ai/claude-code"))})
    env = {**base_env(tmp_path), **api.claude_code_env()}
    result = await agent_eval(claude, "write hi.txt", workdir=tmp_path / "work", env=env, timeout_s=120)
    assert result.success, result.error
    assert (tmp_path / "work" / "hi.txt").read_text() == "hi\n"
    assert result.final_response == "done"
    [first, _second] = api.model_requests()
    assert first.path.startswith("/v1/messages") and first.headers["x-api-key"] == api.api_key


async def test_codex_runs_the_scripted_command(
    agent_eval: AgentEval, loopback_api: LoopbackApi, tmp_path: Path
) -> None:
    api = loopback_api([shell("echo hi > hi.txt"), say("done")])
    codex = AgentSpec(
        "codex", {"binary": str(ensure_cli("@openai/codex")), "model": "gpt-5.5", **api.codex_options()}
    )
    result = await agent_eval(codex, "write hi.txt", workdir=tmp_path / "work", env=base_env(tmp_path))
    assert result.success, result.error
    assert (tmp_path / "work" / "hi.txt").read_text() == "hi\n"
    assert [r.path for r in api.model_requests()] == ["/v1/responses", "/v1/responses"]


@pytest.mark.parametrize("wire", ["anthropic", "responses"])
async def test_copilot_byok_over_messages_or_responses(
    copilot_eval: CopilotEvalRunner, loopback_api: LoopbackApi, tmp_path: Path, wire: str
) -> None:
    api = loopback_api([use_tool("bash", command="echo hi > hi.txt", description="write"), say("done")])
    (CACHE / "copilot-pkg").mkdir(parents=True, exist_ok=True)
    env = {**base_env(tmp_path), "COPILOT_PKG_CACHE_HOME": str(CACHE / "copilot-pkg")}
    agent = CopilotEval(
        model="claude-sonnet-4.5" if wire == "anthropic" else "gpt-5",
        provider=api.copilot_provider(wire),  # type: ignore[arg-type]
        cli_path=str(ensure_cli("@github/copilot")),
    )
    result = await copilot_eval(agent, "write hi.txt", workdir=tmp_path / "work", env=env)
    assert result.success, result.error
    assert (tmp_path / "work" / "hi.txt").read_text() == "hi\n"
    assert result.final_response == "done"
    assert {r.path for r in api.model_requests()} == {
        "/v1/messages" if wire == "anthropic" else "/v1/responses"
    }
