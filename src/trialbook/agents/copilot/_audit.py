"""Request audit: one record per model request Copilot actually sent, read from the outgoing body.

The audit sits in the SDK's request handler, so it sees the final request after every layer of the CLI
has added its own instructions and tools. It records what was sent (model, advertised tools, effort,
images, a hash of the system text) and never the text itself. A body it cannot read is refused before it
leaves the machine, because an audit that silently skips requests would be worse than none.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from copilot import CopilotRequestContext, CopilotRequestHandler, CopilotWebSocketForwarder

from ...evidence import JsonValue, LoadTracker, RequestAudit, request_context
from .._request_audit import UnsupportedRequestError, audit_body

__all__ = ["AuditSink", "AuditingRequestHandler", "UnsupportedRequestError", "audit_body"]


@dataclass
class AuditSink:
    """Where one trial's audit records go, per agent; ``refuse`` stops that trial."""

    session_id: str
    on_refused: Callable[[str], None]
    records: dict[str | None, list[RequestAudit]] = field(default_factory=dict)
    error: str | None = None
    tracker: LoadTracker | None = None
    """Set when the eval declared instruction files or skills: each request's context is checked for them."""

    def see(self, body: JsonValue) -> None:
        """Check one audited request body for the declared inputs (its text is not kept)."""
        if self.tracker is not None:
            self.tracker.see(request_context(body))

    def add(self, agent_id: str | None, record: RequestAudit) -> None:
        key = None if agent_id in (None, self.session_id) else agent_id
        self.records.setdefault(key, []).append(record)

    def refuse(self, reason: str) -> None:
        self.error = self.error or reason
        self.on_refused(reason)


class AuditingRequestHandler(CopilotRequestHandler):
    """The connection-level handler: audits requests of registered sessions, then forwards them."""

    def __init__(self) -> None:
        self.sinks: dict[str, AuditSink] = {}

    async def send_request(self, request: httpx.Request, ctx: CopilotRequestContext) -> httpx.Response:
        sink = self.sinks.get(ctx.session_id or "")
        if sink is not None and request.content:
            try:
                body = json.loads(request.content)
                record = audit_body(body, ctx.request_id, path=request.url.path)
            except (UnsupportedRequestError, ValueError) as exc:
                reason = f"request audit refused a request to {request.url.path}: {exc}"
                sink.refuse(reason)
                return httpx.Response(400, json={"error": {"message": reason}}, request=request)
            sink.add(ctx.agent_id, record)
            sink.see(body)
        response: httpx.Response = await super().send_request(request, ctx)
        return response

    async def open_websocket(self, ctx: CopilotRequestContext) -> Any:
        sink = self.sinks.get(ctx.session_id or "")
        return _AuditedWebSocket(ctx, sink) if sink is not None else CopilotWebSocketForwarder(ctx)


def audit_ws_message(data: str | bytes, connection_id: str | None) -> RequestAudit:
    """Validate one WebSocket message; only ``response.create`` may pass, and it is audited."""
    try:
        message = json.loads(data)
    except ValueError as exc:
        raise UnsupportedRequestError("a WebSocket message is not JSON") from exc
    if not isinstance(message, dict) or message.get("type") != "response.create":
        kind = message.get("type") if isinstance(message, dict) else None
        raise UnsupportedRequestError(f"WebSocket message type {kind!r} is not response.create")
    inner = message.get("response")
    body = inner if isinstance(inner, dict) else {k: v for k, v in message.items() if k != "type"}
    if "input" not in body:
        raise UnsupportedRequestError("response.create carries no 'input'")
    return audit_body(body, connection_id)


class _AuditedWebSocket(CopilotWebSocketForwarder):
    def __init__(self, ctx: CopilotRequestContext, sink: AuditSink) -> None:
        super().__init__(ctx)
        self._sink = sink

    async def send_request_message_with_context(self, data: str | bytes, ctx: CopilotRequestContext) -> None:
        try:
            record = audit_ws_message(data, self.context.request_id)
        except UnsupportedRequestError as exc:
            self._sink.refuse(f"request audit refused a WebSocket message: {exc}")
            return
        self._sink.add(ctx.agent_id, record)
        if self._sink.tracker is not None:
            message = json.loads(data)  # audit_ws_message checked it is a response.create object
            inner = message.get("response")
            self._sink.see(inner if isinstance(inner, dict) else message)
        await super().send_request_message_with_context(data, ctx)
