"""Scripted model turns and the server-sent events each becomes on the Anthropic and OpenAI Responses wires.

Pure functions of a :class:`Turn`: the server module only decides which turn a request gets and writes
these events. They are the stream shapes Claude Code, Codex and Copilot's bring-your-own-key providers
read, including usage, so token accounting can be tested offline too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Event",
    "Turn",
    "anthropic_body",
    "anthropic_events",
    "hang",
    "responses_body",
    "responses_events",
    "route",
    "say",
    "shell",
    "use_tool",
]

Event = tuple[str, dict[str, Any]]
"""One server-sent event: its name and its JSON data."""


@dataclass(frozen=True)
class Turn:
    """One scripted model reply: text, tool calls, reasoning, and the usage it reports.

    ``command`` is the agent's own shell tool (Claude Code's ``Bash``, Codex's ``exec_command``);
    ``tool_calls`` are any other tools by name, with their arguments, in order. ``hang`` holds the request
    open until the server stops, for testing timeouts.
    """

    text: str | None = None
    command: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    input_tokens: int = 120
    output_tokens: int = 30
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    hang: bool = False

    def calls(self, shell_tool: str, shell_arguments: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """Every tool call of this turn, the shell command first, under the wire's shell tool name."""
        shell_call = [(shell_tool, shell_arguments)] if self.command is not None else []
        return shell_call + list(self.tool_calls)


def hang() -> Turn:
    """A reply that never comes: the request is held open until the server stops (for timeouts)."""
    return Turn(hang=True)


def shell(
    command: str, *, input_tokens: int = 120, output_tokens: int = 30, cache_read_tokens: int = 0
) -> Turn:
    """A reply that asks the agent to run ``command`` in its own shell tool."""
    return Turn(
        command=command,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
    )


def use_tool(name: str, **arguments: Any) -> Turn:
    """A reply that calls tool ``name`` with ``arguments`` (for example Copilot's ``bash`` or ``skill``)."""
    return Turn(tool_calls=((name, arguments),))


def say(text: str, *, input_tokens: int = 120, output_tokens: int = 30, cache_read_tokens: int = 0) -> Turn:
    """A final text reply that ends the agent's turn."""
    return Turn(
        text=text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
    )


def _suffix(index: int) -> str:
    return "" if index == 0 else f"_{index}"


def anthropic_events(turn: Turn, n: int, model: str) -> list[Event]:
    """The Anthropic Messages stream (``message_start`` … ``message_stop``) for reply number ``n``."""
    usage = {
        "input_tokens": turn.input_tokens,
        "output_tokens": 1,
        "cache_creation_input_tokens": turn.cache_write_tokens,
        "cache_read_input_tokens": turn.cache_read_tokens,
    }
    start = {"id": f"msg_fake{n:04d}", "type": "message", "role": "assistant", "model": model}
    message: dict[str, Any] = {**start, "content": [], "stop_reason": None, "usage": usage}
    events: list[Event] = [("message_start", {"type": "message_start", "message": message})]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if turn.text is not None:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": turn.text}))
    calls = turn.calls("Bash", {"command": turn.command, "description": "run a command"})
    for index, (name, arguments) in enumerate(calls):
        block = {"type": "tool_use", "id": f"toolu_fake{n:04d}{_suffix(index)}", "name": name, "input": {}}
        blocks.append((block, {"type": "input_json_delta", "partial_json": json.dumps(arguments)}))
    for index, (block, delta) in enumerate(blocks):
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": turn.output_tokens}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def responses_events(turn: Turn, n: int, model: str) -> list[Event]:
    """The OpenAI Responses stream (``response.created`` … ``response.completed``) for reply ``n``."""
    response_id = f"resp_fake{n:04d}"
    output: list[dict[str, Any]] = []
    if turn.reasoning is not None:
        summary = [{"type": "summary_text", "text": turn.reasoning}]
        output.append({"type": "reasoning", "id": f"rs_fake{n:04d}", "summary": summary})
    if turn.text is not None:
        content = [{"type": "output_text", "text": turn.text, "annotations": []}]
        output.append({"type": "message", "id": f"msg_fake{n:04d}", "role": "assistant", "content": content})
    for index, (name, arguments) in enumerate(turn.calls("exec_command", {"cmd": turn.command})):
        suffix = _suffix(index)
        output.append(
            {
                "type": "function_call",
                "id": f"fc_fake{n:04d}{suffix}",
                "call_id": f"call_fake{n:04d}{suffix}",
                "name": name,
                "arguments": json.dumps(arguments),
            }
        )
    events: list[Event] = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}})
    ]
    for index, item in enumerate(output):
        done = {"type": "response.output_item.done", "output_index": index, "item": item}
        events.append(("response.output_item.done", done))
    usage = {
        "input_tokens": turn.input_tokens + turn.cache_read_tokens,
        "input_tokens_details": {"cached_tokens": turn.cache_read_tokens},
        "output_tokens": turn.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": turn.input_tokens + turn.cache_read_tokens + turn.output_tokens,
    }
    completed = {"id": response_id, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": completed}))
    return events


def anthropic_body(events: list[Event]) -> dict[str, Any]:
    """The same reply as one non-streaming Messages body (for ``"stream": false`` requests)."""
    message: dict[str, Any] = dict(events[0][1]["message"])
    blocks: list[dict[str, Any]] = []
    for name, data in events[1:]:
        if name == "content_block_start":
            blocks.append(dict(data["content_block"]))
        elif name == "content_block_delta":
            delta = data["delta"]
            if delta["type"] == "text_delta":
                blocks[-1]["text"] = delta["text"]
            else:
                blocks[-1]["input"] = json.loads(delta["partial_json"])
        elif name == "message_delta":
            message["stop_reason"] = data["delta"]["stop_reason"]
            message["usage"] = {**message["usage"], **data["usage"]}
    return {**message, "content": blocks}


def responses_body(events: list[Event], model: str) -> dict[str, Any]:
    """The same reply as one non-streaming Responses body (for ``"stream": false`` requests)."""
    output = [data["item"] for name, data in events if name == "response.output_item.done"]
    completed = events[-1][1]["response"]
    return {**completed, "object": "response", "status": "completed", "model": model, "output": output}


_ANTHROPIC_401: dict[str, Any] = {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
}
_OPENAI_401: dict[str, Any] = {
    "error": {
        "message": "Incorrect API key provided.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}
Route = tuple[Callable[[Turn, int, str], list[Event]], dict[str, Any], int]


def _count(body: Any, key: str, matches: Callable[[dict[str, Any]], bool]) -> int:
    """How many model replies the conversation in ``body`` already holds (the script position)."""
    entries = body.get(key, []) if isinstance(body, dict) else []
    return sum(1 for entry in entries if isinstance(entry, dict) and matches(entry))


def route(path: str, body: Any) -> Route | None:
    """The wire a model request path speaks, its error body, and the request's script position."""
    if path == "/v1/messages":
        return (
            anthropic_events,
            _ANTHROPIC_401,
            _count(body, "messages", lambda m: m.get("role") == "assistant"),
        )
    if path == "/v1/responses":
        return (
            responses_events,
            _OPENAI_401,
            _count(body, "input", lambda i: i.get("type") == "function_call_output"),
        )
    return None
