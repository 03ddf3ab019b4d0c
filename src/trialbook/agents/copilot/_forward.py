"""The request handler on the wire: each model request of an audited session is read, then forwarded.

HTTP requests go through :func:`audit_body`; WebSocket connections (the OpenAI Responses ``websockets``
transport) go through the SDK's own forwarder with every outgoing message checked first. A request the
audit cannot read never leaves the machine and stops the trial with ``request_audit_error``.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from copilot import (
    CopilotRequestContext,
    CopilotRequestHandler,
    CopilotWebSocketCloseStatus,
    CopilotWebSocketForwarder,
    CopilotWebSocketHandler,
)

from ...evidence import JsonObject, JsonValue, RequestAudit
from ._audit import AuditSink, UnsupportedRequestError, audit_body

__all__ = ["AuditingRequestHandler", "audit_ws_message"]


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


def _stated_text(content: JsonValue) -> str:
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _instructions(body: JsonObject) -> str:
    """The system text a Responses body states itself: ``instructions``, then system/developer input."""
    parts = [str(body["instructions"])] if isinstance(body.get("instructions"), str) else []
    items = body.get("input")
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("role") in ("system", "developer"):
            parts.append(_stated_text(item.get("content")))
    return "".join(parts)


def _unstated(body: JsonObject) -> list[str]:
    """The settings a WebSocket message leaves to the connection instead of stating them."""
    missing: list[str] = []
    if not (isinstance(body.get("model"), str) and body["model"]):
        missing.append("model")
    if not _instructions(body):
        missing.append("instructions")
    if not isinstance(body.get("tools"), list):
        missing.append("tools")
    return missing


def audit_ws_message(data: str | bytes, connection_id: str | None) -> RequestAudit:
    """Validate one WebSocket message; only ``response.create`` stating all its settings may pass.

    A WebSocket connection can carry a continuation (``previous_response_id``) that leaves the model,
    instructions or tools to what the connection used before. What was really sent is then unknowable
    from the message, so such a message is refused rather than recorded with a ``None`` model or the hash
    of empty instructions.
    """
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
    missing = _unstated(body)
    if missing:
        previous = body.get("previous_response_id")
        what = f"a continuation of {previous}" if isinstance(previous, str) else "response.create"
        raise UnsupportedRequestError(
            f"{what} does not state {', '.join(repr(m) for m in missing)}, so what it sends is unknown"
        )
    return audit_body(body, connection_id)


class _AuditedWebSocket(CopilotWebSocketForwarder):
    """The SDK's forwarder with every outgoing message audited first; a refused one closes the socket."""

    def __init__(self, ctx: CopilotRequestContext, sink: AuditSink) -> None:
        super().__init__(ctx)
        self._sink = sink

    async def send_request_message_with_context(self, data: str | bytes, ctx: CopilotRequestContext) -> None:
        try:
            record = audit_ws_message(data, self.context.request_id)
        except UnsupportedRequestError as exc:
            reason = f"request audit refused a WebSocket message: {exc}"
            self._sink.refuse(reason)
            status = CopilotWebSocketCloseStatus(description=reason, error=exc)
            # The CLI hears the reason first: closing the upstream first would let the receive loop
            # report a normal closure before it.
            await CopilotWebSocketHandler.close(self, status)
            await super().close(status)
            return
        self._sink.add(ctx.agent_id, record)
        if self._sink.tracker is not None:
            message = json.loads(data)  # audit_ws_message checked it is a response.create object
            inner = message.get("response")
            self._sink.see(inner if isinstance(inner, dict) else message)
        await super().send_request_message_with_context(data, ctx)
