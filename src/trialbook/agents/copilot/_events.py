"""Turn the Copilot SDK's event stream into evidence, keeping every gap visible.

The mapper is pure: it reads event dictionaries (live from ``on_event`` or replayed from a recording) and
never invents what the stream did not say. A completion nobody started, a call nobody finished, two
different versions of the same event and an interrupted call all become capture errors; the original events
stay in ``raw_events``. Events carrying an ``agentId`` belong to a subagent and are mapped into that
subagent's own trajectory, so the parent's turns, calls and usage stay session-local.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field

from ...evidence import JsonObject, JsonValue, ToolCall, ToolImage, Turn, UsageEntry

__all__ = ["EventMapper", "Invocation", "Trajectory"]

ROOT = ""
"""Trajectory key of the session's own agent; subagents are keyed by their ``agentId``."""


def _obj(value: JsonValue) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _list(value: JsonValue) -> list[JsonValue]:
    return value if isinstance(value, list) else []


def _str(data: JsonObject, key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _int(data: JsonObject, key: str) -> int | None:
    value = data.get(key)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _num(data: JsonObject, key: str) -> float | None:
    value = data.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@dataclass
class _Call:
    call_id: str | None
    name: str
    arguments: JsonValue
    completion: JsonObject | None = None


@dataclass
class Trajectory:
    """What one agent (the session's own or a subagent) did, as the stream showed it."""

    turns: list[Turn] = field(default_factory=list)
    calls: list[_Call] = field(default_factory=list)
    usage: list[UsageEntry] = field(default_factory=list)
    capture_errors: list[str] = field(default_factory=list)
    events: list[JsonValue] = field(default_factory=list)
    model: str | None = None
    errors: list[str] = field(default_factory=list)
    permission_requested: bool = False
    interrupted_calls: set[str] = field(default_factory=set)

    def _find(self, call_id: str) -> _Call | None:
        return next((call for call in self.calls if call.call_id == call_id), None)

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls with their completions; gaps were already named in ``capture_errors``."""
        return tuple(_tool_call(call) for call in self.calls)


@dataclass
class Invocation:
    """A subagent run the parent routed work to, keyed by the child's ``agentId``."""

    agent_id: str | None
    name: str | None
    tool_call_id: str | None
    status: str = "started"
    duration_ms: float | None = None
    error: str | None = None


def _tool_call(call: _Call) -> ToolCall:
    done = call.completion
    if done is None:
        # Without a call id nothing could have been correlated, so completion is unknown, not missing.
        pending = None if call.call_id is None else False
        return ToolCall(call.call_id, call.name, call.arguments, pending, None, None, None)
    success = done.get("success")
    result = _obj(done.get("result"))
    error = _obj(done.get("error"))
    images = [
        ToolImage(raw, _str(block, "mimeType"))
        for block in _list(result.get("contents"))
        if isinstance(block, dict) and block.get("type") == "image"
        for raw in [_decode(_str(block, "data"))]
        if raw is not None
    ]
    return ToolCall(
        call_id=call.call_id,
        name=call.name,
        arguments=call.arguments,
        completion_received=True,
        success=success if isinstance(success, bool) else None,
        result=_str(result, "content"),
        error=_str(error, "message") or _str(done, "error"),
        image_content=images[0].content if images else None,
        image_media_type=images[0].media_type if images else None,
        additional_images=tuple(images[1:]),
    )


def _decode(data: str | None) -> bytes | None:
    if data is None:
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _canonical(value: JsonValue) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


class EventMapper:
    """Feed events in arrival order; read trajectories, invocations and session facts afterwards."""

    def __init__(self) -> None:
        self.trajectories: dict[str, Trajectory] = {ROOT: Trajectory()}
        self.invocations: list[Invocation] = []
        self.seen: dict[str, str] = {}
        self.idle = False
        self.aborted = False
        self.copilot_version: str | None = None
        self.premium_total: float | None = None
        self.premium_by_agent: dict[str, float] = {}
        self.turn_starts = 0
        self.events: list[JsonValue] = []

    def trajectory(self, agent_id: str | None) -> Trajectory:
        """The trajectory for ``agent_id`` (``None`` is the session's own agent)."""
        return self.trajectories.setdefault(agent_id or ROOT, Trajectory())

    def feed(self, event: JsonObject) -> None:
        """Map one event. Exact repeats are dropped; a different event under a seen id is a conflict."""
        kind = _str(event, "type") or "<untyped>"
        agent_id = _str(event, "agentId")
        target = self.trajectory(None if kind.startswith("subagent.") else agent_id)
        event_id = _str(event, "id")
        if event_id is not None:
            fingerprint = _canonical(event)
            previous = self.seen.get(event_id)
            if previous is not None:
                if previous != fingerprint:
                    target.capture_errors.append(f"conflicting duplicate of event {event_id} ({kind})")
                return
            self.seen[event_id] = fingerprint
        target.events.append(event)
        self.events.append(event)
        handler = getattr(self, "_on_" + kind.replace(".", "_"), None)
        if handler is not None:
            handler(self.trajectory(agent_id), _obj(event.get("data")), agent_id)

    # -- one method per event type that carries evidence ---------------------------------------

    def _on_session_start(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.copilot_version = _str(data, "copilotVersion") or self.copilot_version
        t.model = _str(data, "selectedModel") or t.model

    def _on_session_model_change(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.model = _str(data, "newModel") or t.model

    def _on_user_message(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.turns.append(Turn("user", _str(data, "content")))

    def _on_assistant_turn_start(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        if agent_id is None:
            self.turn_starts += 1

    def _on_assistant_message(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        requests = [_obj(r) for r in _list(data.get("toolRequests"))]
        t.turns.append(
            Turn("assistant", _str(data, "content") or None, tuple(_str(r, "toolCallId") for r in requests))
        )
        t.model = _str(data, "model") or t.model

    def _on_assistant_usage(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.usage.append(
            UsageEntry(
                model=_str(data, "model"),
                input_tokens=_int(data, "inputTokens"),
                output_tokens=_int(data, "outputTokens"),
                cache_read_tokens=_int(data, "cacheReadTokens"),
                cache_write_tokens=_int(data, "cacheWriteTokens"),
                reasoning_tokens=_int(data, "reasoningTokens"),
                reasoning_effort=_str(data, "reasoningEffort"),
                duration_ms=_num(data, "duration"),
            )
        )

    def _on_tool_execution_start(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        call_id = _str(data, "toolCallId")
        name = _str(data, "toolName") or "<unnamed>"
        arguments = data.get("arguments")
        if call_id is None:
            t.capture_errors.append(f"tool {name!r} started without a call id; it cannot be correlated")
            t.calls.append(_Call(None, name, arguments))
            return
        known = t._find(call_id)
        if known is None:
            t.calls.append(_Call(call_id, name, arguments))
        elif (known.name, _canonical(known.arguments)) != (name, _canonical(arguments)):
            t.capture_errors.append(f"conflicting start events for tool call {call_id}; kept the first")

    def _on_tool_execution_complete(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        call_id = _str(data, "toolCallId")
        known = t._find(call_id) if call_id is not None else None
        if known is None:
            t.capture_errors.append(f"completion for tool call {call_id} matches no started call")
        elif known.completion is None:
            known.completion = data
        elif _canonical(known.completion) != _canonical(data):
            t.capture_errors.append(f"conflicting completions for tool call {call_id}; kept the first")

    def _on_permission_requested(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.permission_requested = True

    def _on_session_error(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.errors.append(_str(data, "message") or _str(data, "errorType") or "session error")

    def _on_session_idle(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        if agent_id is None:
            self.idle = True
            self.aborted = self.aborted or data.get("aborted") is True

    def _on_abort(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.aborted = True

    def _on_agent_interrupted(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        ids = data.get("toolCallIds")
        t.interrupted_calls.update(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else None

    def _on_subagent_started(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.trajectory(agent_id)
        name = _str(data, "agentName") or _str(data, "agentDisplayName")
        self.invocations.append(Invocation(agent_id, name, _str(data, "toolCallId")))

    def _finish_invocation(self, data: JsonObject, agent_id: str | None, status: str) -> None:
        found = next((i for i in self.invocations if i.agent_id == agent_id), None)
        if found is None:
            self.trajectory(None).capture_errors.append(f"subagent {agent_id} {status} but never started")
            return
        found.status = status
        found.duration_ms = _num(data, "durationMs")
        found.error = _str(data, "error") or _str(_obj(data.get("error")), "message")

    def _on_subagent_completed(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self._finish_invocation(data, agent_id, "completed")

    def _on_subagent_failed(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self._finish_invocation(data, agent_id, "failed")

    def _on_session_shutdown(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.premium_total = _num(data, "totalPremiumRequests")
        for key, metrics in _obj(data.get("agentMetrics")).items():
            costs = [
                _num(_obj(_obj(m).get("requests")), "cost")
                for m in _obj(_obj(metrics).get("modelMetrics")).values()
            ]
            if all(cost is not None for cost in costs):
                self.premium_by_agent[ROOT if key == "main" else key] = sum(c for c in costs if c is not None)

    # -- closing the record ----------------------------------------------------------------------

    def close(self) -> None:
        """Name every call still open: interrupted ones as cancelled, the rest as missing a completion."""
        for t in self.trajectories.values():
            for call in t.calls:
                if call.completion is not None or call.call_id is None:
                    continue
                if call.call_id in t.interrupted_calls or self.aborted:
                    t.capture_errors.append(f"tool call {call.call_id} ({call.name}) was cancelled")
                else:
                    t.capture_errors.append(f"tool call {call.call_id} ({call.name}) has no completion event")
        for invocation in self.invocations:
            if invocation.status == "started":
                invocation.status = "cancelled" if self.aborted else "incomplete"
