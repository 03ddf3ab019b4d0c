"""Assemble a ``CopilotResult`` (with its framework-owned children) from a closed event mapper.

``success`` is about the session only: it ran to completion and its record has no capture error anywhere
in the tree. A tool that failed, or a completion whose output was not captured, leaves ``success`` alone;
the latter shows in ``evidence_complete`` instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..._util.fsutil import atomic_write_text
from ...evidence import (
    CopilotResult,
    JsonObject,
    RequestAudit,
    SkillDiscovery,
    StopReason,
    SubagentInvocation,
)
from ...masking import Masker
from ._config import CopilotEval
from ._events import ROOT, EventMapper, Invocation, Trajectory

__all__ = ["build_result", "write_events"]


def _model_used(t: Trajectory) -> str | None:
    # The usage record names the model that answered; the message model is the fallback. Neither the
    # requested nor the initially selected model is evidence that a model ran.
    for entry in reversed(t.usage):
        if entry.model is not None:
            return entry.model
    models = [e for e in t.events if isinstance(e, dict) and e.get("type") == "assistant.message"]
    return t.model if models else None


def _child(
    mapper: EventMapper,
    invocation: Invocation,
    config: CopilotEval,
    agent_version: str | None,
    audits: Mapping[str | None, Sequence[RequestAudit]],
    admitted: Mapping[str, int],
) -> CopilotResult:
    key = invocation.agent_id or ROOT
    t = mapper.trajectories.get(key)
    if t is None or invocation.agent_id is None:
        raise LookupError("a subagent without its own trajectory has no child result")
    definition = next((a for a in config.agent_definitions if a.get("name") == invocation.name), None)
    ok = invocation.status == "completed" and not t.capture_errors and not t.errors
    error = None if ok else (invocation.error or "; ".join(t.errors + t.capture_errors) or invocation.status)
    return CopilotResult(
        agent_name=invocation.name or "subagent",
        agent_version=agent_version,
        success=ok,
        error=error,
        stop_reason=None,
        turns=tuple(t.turns),
        all_tool_calls=t.tool_calls(),
        usage=tuple(t.usage),
        model_used=_model_used(t),
        duration_ms=invocation.duration_ms,
        raw_events=tuple(t.events),
        capture_errors=tuple(t.capture_errors),
        configuration={"custom_agent": dict(definition)} if definition is not None else None,
        premium_requests=mapper.premium_by_agent.get(key),
        permission_requested=t.permission_requested,
        tool_calls_admitted=admitted.get(key, 0),
        request_audit=tuple(audits.get(invocation.agent_id, ())),
    )


def build_result(
    mapper: EventMapper,
    *,
    config: CopilotEval,
    agent_version: str | None,
    stop_reason: StopReason,
    errors: Sequence[str],
    duration_ms: float,
    working_directory: str,
    configuration: JsonObject | None,
    discovery: SkillDiscovery | None,
    audits: Mapping[str | None, Sequence[RequestAudit]],
    admitted: Mapping[str, int],
    output_dir: Path | None = None,
    secrets: Sequence[str] = (),
    effective_system_prompt: str | None = None,
) -> CopilotResult:
    """The root result; a subagent with its own captured trajectory gets a nested child result."""
    root = mapper.trajectories[ROOT]
    invocations = []
    children: list[CopilotResult] = []
    for invocation in mapper.invocations:
        child = (
            _child(mapper, invocation, config, agent_version, audits, admitted)
            if invocation.agent_id
            else None
        )
        if child is not None:
            children.append(child)
        invocations.append(
            SubagentInvocation(
                invocation_id=invocation.agent_id or invocation.tool_call_id,
                name=invocation.name,
                status=invocation.status,
                duration_ms=invocation.duration_ms,
                result=child,
            )
        )
    if stop_reason == "completed" and root.errors:
        # The session reported an error (the model unreachable, a transport failure) and then went idle:
        # it ended, but it did not complete its work.
        stop_reason = "execution_error"
    gaps = list(root.capture_errors) + [e for c in children for e in c.capture_errors]
    completed = stop_reason == "completed" and mapper.idle and not mapper.aborted and not root.errors
    success = completed and not gaps
    problems = list(errors) + root.errors
    if not success and not problems:
        problems.append(
            f"the event record has {len(gaps)} capture error(s)" if gaps else "the session did not finish"
        )
    premium: float | None
    if ROOT in mapper.premium_by_agent:
        premium = mapper.premium_by_agent[ROOT]
    else:  # without a per-agent split the inclusive total is only usable when there are no children
        premium = mapper.premium_total if not children else None
    if output_dir is not None:
        write_events(output_dir / "events.jsonl", mapper, secrets)
    return CopilotResult(
        agent_name=config.name,
        agent_version=agent_version,
        success=success,
        error=None if success else "; ".join(problems),
        stop_reason=stop_reason,
        turns=tuple(root.turns),
        all_tool_calls=root.tool_calls(),
        usage=tuple(root.usage),
        model_used=_model_used(root),
        duration_ms=duration_ms,
        working_directory=working_directory,
        raw_events=tuple(root.events),
        capture_errors=tuple(root.capture_errors),
        configuration=configuration,
        premium_requests=premium,
        subagent_invocations=tuple(invocations),
        permission_requested=root.permission_requested,
        tool_calls_admitted=admitted.get(ROOT, 0),
        request_audit=tuple(audits.get(None, ())),
        skill_discovery=discovery,
        effective_system_prompt=effective_system_prompt,
    )


def write_events(path: Path, mapper: EventMapper, secrets: Sequence[str]) -> None:
    """Save every captured event as JSON lines (the trial's raw transcript), credentials masked."""
    masker = Masker(secrets)  # on the values, before JSON escapes a secret out of recognition
    lines = [json.dumps(masker.json(event), sort_keys=True) for event in mapper.events]
    text = "\n".join(lines) + ("\n" if lines else "")
    atomic_write_text(path, text)
