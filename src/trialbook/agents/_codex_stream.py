"""Codex's ``exec --json`` output, and its rollout file, read into trialbook's evidence.

What this relies on (Codex 0.171.0):

- items (``command_execution``, ``file_change``, ``mcp_tool_call``, ``web_search``, ``agent_message``,
  ``reasoning``, ``todo_list``, ``error``) arrive as ``item.started`` / ``item.updated`` /
  ``item.completed`` with a stable ``item.id``; some only ever appear completed;
- ``turn.completed.usage`` is cumulative for the thread, so the last one is the total (never a sum);
  ``input_tokens`` already includes cached input; newer fields are optional;
- top-level ``error`` events are not fatal (``Reconnecting... n/5``); ``turn.failed`` is;
- the stream names no model, version or cost: the model and version come from the rollout file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..evidence import JsonObject, JsonValue, ToolCall, Turn, UsageEntry

__all__ = ["TOOL_ITEMS", "CodexStream", "Rollout", "parse_codex_stream", "parse_rollout"]

TOOL_ITEMS = ("command_execution", "file_change", "mcp_tool_call", "web_search")


def _int(value: JsonValue) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: JsonValue) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Rollout:
    """What Codex's own session record adds: the model it used, its version and reasoning effort."""

    model: str | None
    cli_version: str | None
    reasoning_effort: str | None


def parse_rollout(lines: Iterable[str]) -> Rollout:
    """Read ``session_meta`` and the last ``turn_context`` of a rollout file; unreadable lines are skipped."""
    model = version = effort = None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        payload = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(payload, dict):
            continue
        if entry.get("type") == "session_meta":
            version = _str(payload.get("cli_version")) or version
        elif entry.get("type") == "turn_context":
            model = _str(payload.get("model")) or model
            mode = payload.get("collaboration_mode")
            settings = mode.get("settings") if isinstance(mode, dict) else None
            nested = settings.get("reasoning_effort") if isinstance(settings, dict) else None
            effort = _str(payload.get("effort")) or _str(nested) or effort
    return Rollout(model, version, effort)


def _tool_call(item: JsonObject, completed: bool) -> ToolCall:
    kind, status = item.get("type"), item.get("status")
    name = str(kind)
    arguments: JsonValue
    result: str | None = None
    error: str | None = None
    if kind == "command_execution":
        arguments = {"command": item.get("command")}
        result = _str(item.get("aggregated_output"))
        if status != "completed":
            error = f"{status}: exit code {item.get('exit_code')}"
    elif kind == "file_change":
        changes = item.get("changes")
        arguments = {"changes": changes}
        listed = [c for c in changes if isinstance(c, dict)] if isinstance(changes, list) else []
        result = "\n".join(f"{c.get('kind')} {c.get('path')}" for c in listed)
        if status != "completed":
            error = f"{status}: the patch was not applied"
    elif kind == "mcp_tool_call":
        name = f"mcp__{item.get('server')}__{item.get('tool')}"
        arguments = item.get("arguments")
        outcome = item.get("result")
        if isinstance(outcome, dict):
            blocks = outcome.get("content")
            texts = (
                [str(b.get("text")) for b in blocks if isinstance(b, dict) and "text" in b]
                if isinstance(blocks, list)
                else []
            )
            structured = outcome.get("structured_content")
            result = (
                "\n".join(texts) if texts or structured is None else json.dumps(structured, sort_keys=True)
            )
        failure = item.get("error")
        if isinstance(failure, dict):
            error = _str(failure.get("message")) or "the MCP call failed"
        elif status not in (None, "completed"):
            error = str(status)
    else:  # web_search: the results are not in the stream
        arguments = {"query": item.get("query")}
    finished = completed or status in ("completed", "failed", "declined")
    return ToolCall(
        call_id=_str(item.get("id")),
        name=name,
        arguments=arguments,
        completion_received=finished,
        success=(error is None) if finished else None,
        result=result if finished else None,
        error=error if finished else None,
    )


@dataclass(frozen=True)
class CodexStream:
    """What one ``codex exec --json`` stream said."""

    events: tuple[JsonValue, ...]
    thread_id: str | None
    turns: tuple[Turn, ...]
    tool_calls: tuple[ToolCall, ...]
    final_usage: JsonObject | None
    completed: bool
    failure: str | None
    errors: tuple[str, ...]
    problems: tuple[str, ...]
    unreadable_lines: tuple[int, ...]

    def usage(self, rollout: Rollout | None) -> tuple[UsageEntry, ...]:
        """The thread's total usage as one entry; ``()`` (unknown) when no turn completed."""
        u = self.final_usage
        if u is None:
            return ()
        return (
            UsageEntry(
                model=rollout.model if rollout else None,
                input_tokens=_int(u.get("input_tokens")),
                output_tokens=_int(u.get("output_tokens")),
                cache_read_tokens=_int(u.get("cached_input_tokens")),
                cache_write_tokens=_int(u.get("cache_write_input_tokens")),
                reasoning_tokens=_int(u.get("reasoning_output_tokens")),
                reasoning_effort=rollout.reasoning_effort if rollout else None,
                duration_ms=None,
            ),
        )


def parse_codex_stream(lines: Iterable[str]) -> CodexStream:
    """Read ``exec --json`` lines; unknown event and item types are kept as raw events and skipped."""
    events: list[JsonValue] = []
    items: dict[str, tuple[JsonObject, bool]] = {}
    order: list[str] = []
    turns: list[Turn] = []
    pending: list[str] = []
    thread_id = failure = None
    final_usage: JsonObject | None = None
    completed = False
    errors: list[str] = []
    problems: list[str] = []
    unreadable: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except ValueError:
            unreadable.append(number)
            continue
        events.append(event)
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "thread.started":
            thread_id = _str(event.get("thread_id"))
        elif kind == "turn.completed":
            completed, failure = True, None
            usage = event.get("usage")
            final_usage = usage if isinstance(usage, dict) else final_usage
        elif kind == "turn.failed":
            error = event.get("error")
            failure = (_str(error.get("message")) if isinstance(error, dict) else None) or "the turn failed"
        elif kind == "error":
            errors.append(str(event.get("message")))
        elif (
            isinstance(kind, str) and kind.startswith("item.") and isinstance(item := event.get("item"), dict)
        ):
            item_id, item_type, done = item.get("id"), item.get("type"), kind == "item.completed"
            if item_type == "agent_message" and done:
                turns.append(Turn("assistant", _str(item.get("text")), tuple(pending)))
                pending = []
            if item_type not in TOOL_ITEMS or not isinstance(item_id, str):
                continue
            if item_id not in items:
                order.append(item_id)
                pending.append(item_id)
            elif items[item_id][1] and items[item_id][0] != item:
                problems.append(f"line {number}: item {item_id} completed twice, differently")
                continue
            items[item_id] = (item, done or items.get(item_id, (item, False))[1])
    if pending:
        turns.append(Turn("assistant", None, tuple(pending)))
    return CodexStream(
        events=tuple(events),
        thread_id=thread_id,
        turns=tuple(turns),
        tool_calls=tuple(_tool_call(*items[i]) for i in order),
        final_usage=final_usage,
        completed=completed and failure is None,
        failure=failure,
        errors=tuple(errors),
        problems=tuple(problems),
        unreadable_lines=tuple(unreadable),
    )
