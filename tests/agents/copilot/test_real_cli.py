"""The copilot agent driving the real Copilot CLI (npm, pinned) against a loopback chat-completions fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_chat import ChatServer, call, text
from trialbook.agents import AgentSpec
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool, create

from .conftest import MiniSandbox

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio(loop_scope="module")]


def agent(cli: str, server: ChatServer, pool: ServerPool, **options: object) -> CopilotAgent:
    config = CopilotEval(model="fake-model", provider=server.provider(), cli_path=cli, **options)  # type: ignore[arg-type]
    return CopilotAgent(config, environ={}, pool=pool)


async def test_bash_call_writes_in_the_sandbox_and_shows_in_the_shim_log(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    sandbox.shim("deploytool")
    script = [
        call("bash", command="echo made > made.txt && deploytool --prod", description="x"),
        text("done"),
    ]
    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool)
        result = await copilot.run(sandbox.task("make the file", pkg_cache))
    assert result.success, result.error
    assert result.stop_reason == "completed"
    assert (sandbox.workdir / "made.txt").read_text() == "made\n"
    assert sandbox.log.read_text() == "deploytool --prod\n"
    [bash] = result.tool_calls_for("bash")
    assert bash.completion_received is True and bash.success is True and bash.evidence_complete
    assert result.evidence_complete and result.capture_errors == ()
    assert result.final_response == "done"
    assert result.model_used == "fake-model"
    assert [u.input_tokens for u in result.usage] == [100, 100]
    assert result.tool_calls_admitted == 1
    assert result.permission_requested is True
    assert result.agent_version == "1.0.102"
    assert result.configuration is not None and "api_key" not in str(result.configuration)
    assert server.api_key not in (sandbox.root / "out" / "events.jsonl").read_text()


async def test_an_eval_file_entry_runs_through_create(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, no_tokens: dict[str, str]
) -> None:
    with ChatServer([text("hello from the fake")]) as server:
        spec = AgentSpec(
            "copilot",
            {
                "model": "fake-model",
                "provider": server.provider(),
                "cli_path": copilot_cli,
                "timeout_s": "60s",
            },
            source="evals/demo.eval.yaml",
        )
        copilot = create(spec)
        try:
            assert copilot.available().ok
            result = await copilot.run(sandbox.task("say hello", pkg_cache))
        finally:
            await copilot.aclose()
    assert result.success, result.error
    assert result.final_response == "hello from the fake"
