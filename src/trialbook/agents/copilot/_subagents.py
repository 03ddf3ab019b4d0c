"""Track the subagent runs a session routes work to, from their start to how they ended.

An invocation is keyed by the child's ``agentId``. An end event for a child that never started is a capture
error of the parent; a child still running when the stream ends is ``cancelled`` if the session was
aborted and ``incomplete`` otherwise, never quietly ``completed``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...evidence import JsonObject
from ._fields import as_obj, get_num, get_str

__all__ = ["Invocation", "close_invocations", "finish_invocation", "start_invocation"]


@dataclass
class Invocation:
    """A subagent run the parent routed work to, keyed by the child's ``agentId``."""

    agent_id: str | None
    name: str | None
    tool_call_id: str | None
    status: str = "started"
    duration_ms: float | None = None
    error: str | None = None


def start_invocation(data: JsonObject, agent_id: str | None) -> Invocation:
    """The invocation a ``subagent.started`` event opens."""
    name = get_str(data, "agentName") or get_str(data, "agentDisplayName")
    return Invocation(agent_id, name, get_str(data, "toolCallId"))


def finish_invocation(
    invocations: list[Invocation], data: JsonObject, agent_id: str | None, status: str
) -> str | None:
    """Close the invocation of ``agent_id`` with ``status``; answer a capture error if it never started."""
    found = next((i for i in invocations if i.agent_id == agent_id), None)
    if found is None:
        return f"subagent {agent_id} {status} but never started"
    found.status = status
    found.duration_ms = get_num(data, "durationMs")
    found.error = get_str(data, "error") or get_str(as_obj(data.get("error")), "message")
    return None


def close_invocations(invocations: list[Invocation], aborted: bool) -> None:
    """Give every invocation still running the status the end of the stream implies."""
    for invocation in invocations:
        if invocation.status == "started":
            invocation.status = "cancelled" if aborted else "incomplete"
