"""The audited WebSocket forwarder against a real loopback Responses WebSocket server.

Copilot sends OpenAI Responses requests over a WebSocket with ``transport: "websockets"``; with
``audit_requests`` each message passes the SDK's forwarder, subclassed by trialbook, on its way out.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

import pytest
from copilot import CopilotRequestContext

from tests.fakes.responses_ws import ResponsesSocket
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool
from trialbook.agents.copilot._audit import AuditSink
from trialbook.agents.copilot._forward import AuditingRequestHandler
from trialbook.evidence import dump_result, load_result
from trialbook.testing import call, text

from .conftest import MiniSandbox

pytestmark = [pytest.mark.asyncio(loop_scope="module")]

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@pytest.mark.real_cli
async def test_the_real_cli_over_websocket_is_audited_message_by_message(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    script = [call("bash", command="echo over-ws > ws.txt", description="x"), text("done")]
    with ResponsesSocket(script) as socket:
        config = CopilotEval(
            model="fake-model", provider=socket.provider(), cli_path=copilot_cli, audit_requests=True
        )
        result = await CopilotAgent(config, environ={}, pool=shared_pool).run(
            sandbox.task("write it", pkg_cache)
        )
    assert result.success, result.error
    assert (sandbox.workdir / "ws.txt").read_text() == "over-ws\n", "the reply came back over the socket"
    assert socket.paths and all(path == "/v1/responses" for path in socket.paths)
    second = socket.messages[1]
    assert second.get("previous_response_id") == "resp_1", "the second turn is a continuation"
    assert len(result.request_audit) == 2 == len(socket.messages), "one record per forwarded message"
    for record, message in zip(result.request_audit, socket.messages, strict=True):
        assert record.model == "fake-model" == message["model"]
        assert record.instructions_sha256 == hashlib.sha256(message["instructions"].encode()).hexdigest()
        assert record.instructions_sha256 != EMPTY_SHA256
        assert record.tool_names == tuple(t["name"] for t in message["tools"]) and "bash" in record.tool_names
    assert socket.api_key not in json.dumps(dump_result(result))
    assert load_result(dump_result(result)) == result


class Bridge:
    """The SDK's connection back to the CLI, which only the CLI process holds; here it records."""

    def __init__(self) -> None:
        self.frames: list[Any] = []
        self.errors: list[str] = []
        self.ended = False

    async def write(self, data: str | bytes) -> None:
        self.frames.append(json.loads(data))

    async def end(self) -> None:
        self.ended = True

    async def error(self, message: str, code: str | None = None) -> None:
        self.errors.append(message)


def context(socket: ResponsesSocket, bridge: Bridge) -> CopilotRequestContext:
    return CopilotRequestContext(
        request_id="conn-1",
        transport="websocket",
        url=f"ws://127.0.0.1:{socket.port}/v1/responses",
        headers={"authorization": [f"Bearer {socket.api_key}"], "host": ["ignored"]},
        cancel_event=asyncio.Event(),
        session_id="session-1",
        _bridge=bridge,  # type: ignore[arg-type]
    )


async def until(check: Any) -> None:
    for _ in range(500):
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the loopback server never answered")


async def test_a_continuation_without_settings_is_refused_before_the_server_sees_it() -> None:
    refused: list[str] = []
    sink = AuditSink("session-1", refused.append)
    handler = AuditingRequestHandler()
    handler.sinks["session-1"] = sink
    opening = {
        "type": "response.create",
        "model": "fake-model",
        "instructions": "Be brief.",
        "tools": [{"type": "function", "name": "bash", "parameters": {}}],
        "input": [{"role": "user", "content": "hi"}],
    }
    continuation = {
        "type": "response.create",
        "previous_response_id": "resp_1",
        "input": [{"type": "function_call_output", "call_id": "c1", "output": "ok"}],
    }
    with ResponsesSocket([call("bash", command="true"), text("done")]) as socket:
        bridge = Bridge()
        ctx = context(socket, bridge)
        forwarder = await handler.open_websocket(ctx)
        await forwarder.open()
        try:
            await forwarder.send_request_message_with_context(json.dumps(opening), ctx)
            await until(lambda: any(f["type"] == "response.completed" for f in bridge.frames))
            await forwarder.send_request_message_with_context(json.dumps(continuation), ctx)
            await asyncio.sleep(0.2)  # room for a frame that must not arrive
            assert socket.messages == [opening], "the continuation never left the machine"
        finally:
            await forwarder.aclose()
    [record] = sink.records[None]
    assert (record.model, record.tool_names) == ("fake-model", ("bash",))
    assert record.instructions_sha256 == hashlib.sha256(b"Be brief.").hexdigest()
    assert sink.error is not None and "continuation of resp_1 does not state 'model'" in sink.error
    assert refused == [sink.error], "the trial was told to stop"
    assert bridge.errors == [sink.error], "the CLI's side of the socket was closed with the reason"
    assert [f["type"] for f in bridge.frames][-1] == "response.completed"
