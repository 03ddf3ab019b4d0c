"""``request_audit_error`` and ``cleanup_error`` provoked on the real Copilot CLI, read from the result."""

from __future__ import annotations

import os
import signal
from typing import Any

import pytest
from copilot import define_tool
from pydantic import BaseModel

from tests.fakes.openai_chat import ChatServer, call, text
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool, _audit, _forward
from trialbook.evidence import JsonValue, RequestAudit, dump_result, load_result

from .conftest import MiniSandbox

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio(loop_scope="module")]


async def test_an_unreadable_request_is_never_sent_and_stops_with_request_audit_error(
    copilot_cli: str,
    pkg_cache: str,
    sandbox: MiniSandbox,
    shared_pool: ServerPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Offline the CLI only sends bodies the audit can read, so the second body is replaced by a shape
    # no provider API has before the real audit reads it; everything around it is the real path.
    real = _audit.audit_body
    seen: list[int] = []

    def second_unreadable(body: JsonValue, request_id: str | None, *, path: str = "") -> RequestAudit:
        seen.append(1)
        return real(["not", "an", "object"] if len(seen) == 2 else body, request_id, path=path)

    monkeypatch.setattr(_forward, "audit_body", second_unreadable)
    script = [call("bash", command="echo ran > ran.txt", description="x"), text("never sent")]
    with ChatServer(script) as server:
        config = CopilotEval(
            model="fake-model", provider=server.provider(), cli_path=copilot_cli, audit_requests=True
        )
        result = await CopilotAgent(config, environ={}, pool=shared_pool).run(
            sandbox.task("run it", pkg_cache)
        )
        sent = list(server.chat_requests())
    assert (sandbox.workdir / "ran.txt").exists(), "the first request went out and its tool call ran"
    assert len(sent) == 1, "the refused request never reached the model"
    assert result.success is False
    assert result.stop_reason == "request_audit_error"
    assert result.error is not None
    assert "request audit refused a request to /v1/chat/completions" in result.error
    assert "not a JSON object" in result.error
    [record] = result.request_audit
    assert record.model == "fake-model"
    saved = dump_result(result)
    assert saved["stop_reason"] == "request_audit_error"
    assert load_result(saved) == result


class Nothing(BaseModel):
    pass


async def test_a_cli_that_dies_under_the_session_is_a_cleanup_error(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox
) -> None:
    pool = ServerPool(max_idle=0)  # its own CLI, so killing it harms no other test
    pids: list[int] = []

    def kill_the_cli(_params: Nothing, _invocation: object) -> str:
        os.kill(pids[0], signal.SIGKILL)
        return "killed"

    tool = define_tool("crash", description="crashes", handler=kill_the_cli, params_type=Nothing)
    original = pool.acquire

    async def remember_pid(*args: Any, **kwargs: Any) -> Any:
        server = await original(*args, **kwargs)
        pids.append(server.client._cli_process.pid)
        return server

    pool.acquire = remember_pid  # type: ignore[method-assign]
    try:
        with ChatServer([call("crash"), text("never")]) as server:
            config = CopilotEval(
                model="fake-model", provider=server.provider(), cli_path=copilot_cli, tools=(tool,)
            )
            result = await CopilotAgent(config, environ={}, pool=pool).run(
                sandbox.task("crash", pkg_cache, timeout_s=5)
            )
    finally:
        await pool.aclose()
    assert result.success is False
    assert result.stop_reason == "cleanup_error"
    assert result.error is not None
    assert "cleanup failed: disconnecting the session raised ProcessExitedError" in result.error
    saved = dump_result(result)
    assert saved["stop_reason"] == "cleanup_error"
    assert load_result(saved) == result
