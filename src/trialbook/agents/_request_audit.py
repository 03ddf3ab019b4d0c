"""Reading one outgoing model request body into what the request audit records.

Shared by the Copilot request handler and the auditing loopback proxy of the agent CLIs, so every agent's
``request_audit`` means the same thing. It reads the three wire formats the agents speak (OpenAI chat
completions, OpenAI Responses, Anthropic Messages) and refuses any other shape: an audit that silently
skipped a request would be worse than none. Pure: no I/O.
"""

from __future__ import annotations

import hashlib

from ..evidence import JsonObject, JsonValue, RequestAudit

__all__ = ["UnsupportedRequestError", "audit_body"]


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
