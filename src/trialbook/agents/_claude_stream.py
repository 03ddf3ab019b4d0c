"""Claude Code's ``stream-json`` output read into trialbook's evidence, with its quirks handled.

Quirks this parser relies on (seen with Claude Code 2.1.197):

- one API message arrives as several ``assistant`` lines, one per content block, sharing
  ``message.id``; each repeats the message-start usage, so per-line usage is never summed;
- tokens and cost come from the final ``result`` event (see ``_claude_usage``);
- ``is_error`` decides failure, not ``subtype``: a run without credentials ends ``subtype: success``
  with ``is_error: true``; the error subtypes carry ``errors[]`` instead of ``result``;
- synthetic assistant messages (model ``<synthetic>``) are the CLI talking, not the model.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..evidence import JsonObject, JsonValue, ToolCall, ToolImage, Turn, UsageEntry
from ._claude_usage import plain_model, reported_cost_usd, usage_entries

__all__ = ["ClaudeStream", "parse_claude_stream", "plain_model"]


@dataclass
class _Call:
    call_id: str
    name: str
    arguments: JsonValue
    done: bool = False
    success: bool | None = None
    result: str | None = None
    error: str | None = None
    images: list[ToolImage] = field(default_factory=list)


@dataclass(frozen=True)
class ClaudeStream:
    """What one stream said; ``problems`` are correlation faults that make the record untrustworthy."""

    events: tuple[JsonValue, ...]
    session_id: str | None
    version: str | None
    init: JsonObject | None
    turns: tuple[Turn, ...]
    tool_calls: tuple[ToolCall, ...]
    model: str | None
    result: JsonObject | None
    synthetic_errors: tuple[str, ...]
    problems: tuple[str, ...]
    unreadable_lines: tuple[int, ...]

    def usage(self) -> tuple[UsageEntry, ...]:
        """Per-model usage from the result event; ``()`` (unknown) when the stream has no result."""
        return usage_entries(self.result, self.model)

    def cost_usd(self) -> float | None:
        """The CLI's own price of the run, when it reported one."""
        return reported_cost_usd(self.result)


def _text_of(content: JsonValue) -> tuple[str | None, list[ToolImage]]:
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        return None, []
    texts: list[str] = []
    images: list[ToolImage] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            texts.append(str(block["text"]))
        elif block.get("type") == "image" and isinstance(source := block.get("source"), dict):
            try:
                data = base64.b64decode(str(source.get("data", "")), validate=True)
            except (binascii.Error, ValueError):
                continue
            media = source.get("media_type")
            images.append(ToolImage(data, media if isinstance(media, str) else None))
    return ("\n".join(texts) if texts or not images else None), images


class _Parser:
    def __init__(self) -> None:
        self.events: list[JsonValue] = []
        self.init: JsonObject | None = None
        self.result: JsonObject | None = None
        self.calls: dict[str, _Call] = {}
        self.order: list[str] = []
        self.turns: list[tuple[str, list[str], list[str]]] = []  # message id, texts, tool ids
        self.model: str | None = None
        self.synthetic: list[str] = []
        self.problems: list[str] = []
        self.unreadable: list[int] = []

    def feed(self, number: int, line: str) -> None:
        if not line.strip():
            return
        try:
            event = json.loads(line)
        except ValueError:
            self.unreadable.append(number)
            return
        self.events.append(event)
        if not isinstance(event, dict):
            return
        kind, subtype = event.get("type"), event.get("subtype")
        if kind == "system" and subtype == "init":
            self.init = event
        elif kind == "assistant" and isinstance(message := event.get("message"), dict):
            self._assistant(message, top_level=event.get("parent_tool_use_id") is None)
        elif kind == "user" and isinstance(message := event.get("message"), dict):
            self._user(number, message)
        elif kind == "result":
            self.result = event
        # Anything else (api_retry, stream_event, rate_limit_event, future types) stays in raw events only.

    def _assistant(self, message: JsonObject, *, top_level: bool) -> None:
        content = message.get("content")
        blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if message.get("model") == "<synthetic>":
            self.synthetic.extend(str(b["text"]) for b in blocks if b.get("type") == "text" and "text" in b)
            return
        if isinstance(model := message.get("model"), str) and top_level:
            self.model = model
        message_id = str(message.get("id"))
        if top_level and (not self.turns or self.turns[-1][0] != message_id):
            self.turns.append((message_id, [], []))
        for block in blocks:
            if block.get("type") == "text" and isinstance(block.get("text"), str) and top_level:
                self.turns[-1][1].append(str(block["text"]))
            elif block.get("type") == "tool_use" and isinstance(call_id := block.get("id"), str):
                if call_id in self.calls:
                    if self.calls[call_id].arguments != block.get("input"):
                        self.problems.append(f"tool call {call_id} was requested twice with different input")
                    continue
                self.calls[call_id] = _Call(call_id, str(block.get("name")), block.get("input"))
                self.order.append(call_id)
                if top_level:
                    self.turns[-1][2].append(call_id)

    def _user(self, number: int, message: JsonObject) -> None:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            call_id = block.get("tool_use_id")
            call = self.calls.get(call_id) if isinstance(call_id, str) else None
            if call is None:
                self.problems.append(f"line {number}: a tool result for unknown call {call_id!r}")
                continue
            text, images = _text_of(block.get("content"))
            failed = block.get("is_error") is True
            outcome = (not failed, None if failed else text, text if failed else None)
            if call.done:
                if (call.success, call.result, call.error) != outcome:
                    self.problems.append(f"line {number}: tool call {call_id} completed twice, differently")
                continue
            call.done = True
            call.success, call.result, call.error = outcome
            call.images = images

    def finish(self) -> ClaudeStream:
        calls = []
        for call_id in self.order:
            c = self.calls[call_id]
            first = c.images[0] if c.images else None
            calls.append(
                ToolCall(
                    call_id=c.call_id,
                    name=c.name,
                    arguments=c.arguments,
                    completion_received=c.done,
                    success=c.success,
                    result=c.result,
                    error=c.error,
                    image_content=first.content if first else None,
                    image_media_type=first.media_type if first else None,
                    additional_images=tuple(c.images[1:]),
                )
            )
        turns = tuple(
            Turn("assistant", "\n".join(texts) if texts else None, tuple(ids)) for _, texts, ids in self.turns
        )
        init = self.init or {}
        model = self.model
        if model is None and isinstance(init.get("model"), str):
            model = plain_model(str(init["model"]))
        session = (self.result or init).get("session_id")
        version = init.get("claude_code_version")
        return ClaudeStream(
            events=tuple(self.events),
            session_id=session if isinstance(session, str) else None,
            version=version if isinstance(version, str) else None,
            init=self.init,
            turns=turns,
            tool_calls=tuple(calls),
            model=model,
            result=self.result,
            synthetic_errors=tuple(self.synthetic),
            problems=tuple(self.problems),
            unreadable_lines=tuple(self.unreadable),
        )


def parse_claude_stream(lines: Iterable[str]) -> ClaudeStream:
    """Read ``stream-json`` lines (unknown event types are kept as raw events and otherwise skipped)."""
    parser = _Parser()
    for number, line in enumerate(lines, start=1):
        parser.feed(number, line)
    return parser.finish()
