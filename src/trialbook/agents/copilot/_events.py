"""Turn the Copilot SDK's event stream into evidence, keeping every gap visible.

The mapper is pure: it reads event dictionaries (live from ``on_event`` or replayed from a recording) and
never invents what the stream did not say. A completion nobody started, a call nobody finished, two
different versions of the same event and an interrupted call all become capture errors; the original events
stay in ``raw_events``. Events carrying an ``agentId`` belong to a subagent and are mapped into that
subagent's own trajectory, so the parent's turns, calls and usage stay session-local.

Tool-call correlation lives in ``_calls`` and subagent bookkeeping in ``_subagents``; this module routes
events to them and keeps turns, usage and session facts itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...evidence import JsonObject, JsonValue, ToolCall, Turn, UsageEntry
from ._calls import PendingCall, complete_call, start_call, to_tool_call, unfinished_calls, unreadable_images
from ._fields import as_list, as_obj, canonical, get_int, get_num, get_str
from ._subagents import Invocation, close_invocations, finish_invocation, start_invocation

__all__ = ["ROOT", "EventMapper", "Invocation", "Trajectory"]

ROOT = ""
"""Trajectory key of the session's own agent; subagents are keyed by their ``agentId``."""


@dataclass
class Trajectory:
    """What one agent (the session's own or a subagent) did, as the stream showed it."""

    turns: list[Turn] = field(default_factory=list)
    calls: list[PendingCall] = field(default_factory=list)
    usage: list[UsageEntry] = field(default_factory=list)
    capture_errors: list[str] = field(default_factory=list)
    events: list[JsonValue] = field(default_factory=list)
    model: str | None = None
    errors: list[str] = field(default_factory=list)
    permission_requested: bool = False
    interrupted_calls: set[str] = field(default_factory=set)

    def tool_calls(self) -> tuple[ToolCall, ...]:
        """The calls with their completions; gaps were already named in ``capture_errors``."""
        return tuple(to_tool_call(call) for call in self.calls)

    def note(self, error: str | None) -> None:
        """Keep ``error`` as a capture error; ``None`` means the event revealed no gap."""
        if error is not None:
            self.capture_errors.append(error)


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
        kind = get_str(event, "type") or "<untyped>"
        agent_id = get_str(event, "agentId")
        target = self.trajectory(None if kind.startswith("subagent.") else agent_id)
        event_id = get_str(event, "id")
        if event_id is not None:
            fingerprint = canonical(event)
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
            handler(self.trajectory(agent_id), as_obj(event.get("data")), agent_id)

    # -- one method per event type that carries evidence ---------------------------------------

    def _on_session_start(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.copilot_version = get_str(data, "copilotVersion") or self.copilot_version
        t.model = get_str(data, "selectedModel") or t.model

    def _on_session_model_change(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.model = get_str(data, "newModel") or t.model

    def _on_user_message(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.turns.append(Turn("user", get_str(data, "content")))

    def _on_assistant_turn_start(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        if agent_id is None:
            self.turn_starts += 1

    def _on_assistant_message(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        requests = [as_obj(r) for r in as_list(data.get("toolRequests"))]
        t.turns.append(
            Turn(
                "assistant",
                get_str(data, "content") or None,
                tuple(get_str(r, "toolCallId") for r in requests),
            )
        )
        t.model = get_str(data, "model") or t.model

    def _on_assistant_usage(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.usage.append(
            UsageEntry(
                model=get_str(data, "model"),
                input_tokens=get_int(data, "inputTokens"),
                output_tokens=get_int(data, "outputTokens"),
                cache_read_tokens=get_int(data, "cacheReadTokens"),
                cache_write_tokens=get_int(data, "cacheWriteTokens"),
                reasoning_tokens=get_int(data, "reasoningTokens"),
                reasoning_effort=get_str(data, "reasoningEffort"),
                duration_ms=get_num(data, "duration"),
            )
        )

    def _on_tool_execution_start(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.note(start_call(t.calls, data))

    def _on_tool_execution_complete(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.note(complete_call(t.calls, data))

    def _on_permission_requested(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.permission_requested = True

    def _on_session_error(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        t.errors.append(get_str(data, "message") or get_str(data, "errorType") or "session error")

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
        self.invocations.append(start_invocation(data, agent_id))

    def _on_subagent_completed(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.trajectory(None).note(finish_invocation(self.invocations, data, agent_id, "completed"))

    def _on_subagent_failed(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.trajectory(None).note(finish_invocation(self.invocations, data, agent_id, "failed"))

    def _on_session_shutdown(self, t: Trajectory, data: JsonObject, agent_id: str | None) -> None:
        self.premium_total = get_num(data, "totalPremiumRequests")
        for key, metrics in as_obj(data.get("agentMetrics")).items():
            costs = [
                get_num(as_obj(as_obj(m).get("requests")), "cost")
                for m in as_obj(as_obj(metrics).get("modelMetrics")).values()
            ]
            if all(cost is not None for cost in costs):
                self.premium_by_agent[ROOT if key == "main" else key] = sum(c for c in costs if c is not None)

    # -- closing the record ----------------------------------------------------------------------

    def close(self) -> None:
        """Name every call still open (interrupted ones as cancelled) and every image that did not decode."""
        for t in self.trajectories.values():
            t.capture_errors.extend(unfinished_calls(t.calls, t.interrupted_calls, self.aborted))
            t.capture_errors.extend(unreadable_images(t.calls))
        close_invocations(self.invocations, self.aborted)
