"""Request audit: one record per model request Copilot actually sent, read from the outgoing body.

The audit sits in the SDK's request handler, so it sees the final request after every layer of the CLI
has added its own instructions and tools. It records what was sent (model, advertised tools, effort,
images, a hash of the system text) and never the text itself. A body it cannot read is refused before it
leaves the machine, because an audit that silently skips requests would be worse than none.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from copilot import CopilotRequestContext, CopilotRequestHandler, CopilotWebSocketForwarder

from ...evidence import JsonObject, JsonValue, RequestAudit

__all__ = ["AuditSink", "AuditingRequestHandler", "UnsupportedRequestError", "audit_body"]


class UnsupportedRequestError(ValueError):
    """The outgoing request has a shape the audit cannot read, so it must not be forwarded."""


def _text(content: JsonValue, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, list):
        raise UnsupportedRequestError(f"message content of type {type(content).__name__}")
    texts = [
        text
        for p in content
        if isinstance(p, dict) and p.get("type") in kinds
        for text in [p.get("text")]
        if isinstance(text, str)
    ]
    return "\n\n".join(texts)


def _images(content: JsonValue, out: list[str | None]) -> None:
    if not isinstance(content, list):
        return
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "image_url":
            detail = part.get("image_url")
            value = detail.get("detail") if isinstance(detail, dict) else None
            out.append(value if isinstance(value, str) else None)
        elif kind in ("input_image", "image"):
            value = part.get("detail")
            out.append(value if isinstance(value, str) else None)


def _messages(body: JsonObject, key: str) -> list[JsonObject]:
    items = body.get(key)
    if isinstance(items, str) and key == "input":
        return [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise UnsupportedRequestError(f"{key!r} is missing or not a list")
    messages: list[JsonObject] = []
    for item in items:
        if not isinstance(item, dict):
            raise UnsupportedRequestError(f"an entry of {key!r} is not an object")
        messages.append(item)
    return messages


def _tool_names(body: JsonObject, nested: bool) -> tuple[str, ...]:
    tools = body.get("tools")
    tools = [] if tools is None else tools
    if not isinstance(tools, list):
        raise UnsupportedRequestError("'tools' is not a list")
    names: list[str] = []
    for tool in tools:
        if not isinstance(tool, dict):
            raise UnsupportedRequestError("a tool is not an object")
        if nested and tool.get("type") == "function" and isinstance(tool.get("function"), dict):
            name = tool["function"].get("name")  # type: ignore[union-attr]
        elif not nested and tool.get("type", "function") in ("function", "custom"):
            name = tool.get("name")
        else:
            continue
        if isinstance(name, str):
            names.append(name)
    return tuple(names)


def audit_body(body: JsonValue, request_id: str | None, *, path: str = "") -> RequestAudit:
    """Read one outgoing body: OpenAI chat completions, OpenAI Responses, or Anthropic messages.

    Raises:
        UnsupportedRequestError: when the body matches none of them, so the caller refuses to send it.
    """
    if not isinstance(body, dict):
        raise UnsupportedRequestError("the request body is not a JSON object")
    raw_model = body.get("model")
    model = raw_model if isinstance(raw_model, str) else None
    images: list[str | None] = []
    instructions: list[str] = []
    effort: JsonValue = None
    if "input" in body:  # Responses
        if isinstance(body.get("instructions"), str) and body["instructions"]:
            instructions.append(str(body["instructions"]))
        for message in _messages(body, "input"):
            if message.get("role") in ("system", "developer"):
                instructions.append(_text(message.get("content"), ("input_text", "text")))
            _images(message.get("content"), images)
        reasoning = body.get("reasoning")
        effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
        tools = _tool_names(body, nested=False)
    elif path.rstrip("/").endswith("/messages"):  # Anthropic
        system = body.get("system")
        if system is not None:
            instructions.append(_text(system, ("text",)))
        for message in _messages(body, "messages"):
            _images(message.get("content"), images)
        tools = _tool_names(body, nested=False)
    elif "messages" in body:  # chat completions
        for message in _messages(body, "messages"):
            if message.get("role") in ("system", "developer"):
                instructions.append(_text(message.get("content"), ("text",)))
            _images(message.get("content"), images)
        effort = body.get("reasoning_effort")
        tools = _tool_names(body, nested=True)
    else:
        raise UnsupportedRequestError("neither 'messages' nor 'input' is present")
    digest = hashlib.sha256("\n\n".join(instructions).encode("utf-8")).hexdigest()
    return RequestAudit(
        request_id=request_id,
        model=model,
        tool_names=tools,
        reasoning_effort=effort if isinstance(effort, str) else None,
        image_details=tuple(images),
        image_count=len(images),
        instructions_sha256=digest,
    )


@dataclass
class AuditSink:
    """Where one trial's audit records go, per agent; ``refuse`` stops that trial."""

    session_id: str
    on_refused: Callable[[str], None]
    records: dict[str | None, list[RequestAudit]] = field(default_factory=dict)
    error: str | None = None

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
                record = audit_body(json.loads(request.content), ctx.request_id, path=request.url.path)
            except (UnsupportedRequestError, ValueError) as exc:
                reason = f"request audit refused a request to {request.url.path}: {exc}"
                sink.refuse(reason)
                return httpx.Response(400, json={"error": {"message": reason}}, request=request)
            sink.add(ctx.agent_id, record)
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
        await super().send_request_message_with_context(data, ctx)
