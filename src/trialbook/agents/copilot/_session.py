"""One trial: a fresh Copilot session on a (possibly shared) CLI server, from creation to cleanup.

Events are captured from the moment the session is created (``on_event`` is passed to ``create``), because
usage and idle events are ephemeral and a handler registered later misses the start. Every way a trial
can stop (idle, budget, turn limit, audit refusal, timeout, cancellation) goes through the same abort and
cleanup path, so the result is always built from everything the stream delivered, cleanup events included.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from copilot.rpc import PermissionDecisionApproveOnce, PermissionDecisionReject

from ...evidence import CopilotResult, DeclaredInput, JsonObject, LoadTracker, SkillDiscovery, StopReason
from ...masking import Masker
from ._audit import AuditSink
from ._config import CopilotEval
from ._events import ROOT, EventMapper
from ._exit import cli_process, describe_exit, watch_exit
from ._masked import mask_record
from ._result import build_result
from ._server import ServerPool
from ._skills import discover_skills
from ._snapshot import configuration_snapshot

__all__ = ["Trial", "run_trial"]

SETTLE_S = 10.0
"""How long an aborted session gets to report its last events before cleanup."""


@dataclass
class Trial:
    """Everything one session needs; ``env`` is the CLI's complete environment."""

    config: CopilotEval
    prompt: str
    workdir: Path
    env: dict[str, str]
    cli_path: str
    agent_version: str | None
    timeout_s: float | None
    output_dir: Path | None = None
    secrets: tuple[str, ...] = ()
    inputs: tuple[DeclaredInput, ...] = ()


@dataclass
class _Run:
    """Mutable state shared by the event callback, the hook and the waiting loop."""

    trial: Trial
    mapper: EventMapper = field(default_factory=EventMapper)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    stop_reason: StopReason | None = None
    errors: list[str] = field(default_factory=list)
    admitted: dict[str, int] = field(default_factory=dict)
    budget_denied: bool = False
    cli_exited: bool = False

    def request_stop(self, reason: StopReason, message: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason
            self.errors.append(message)
        self.stop.set()

    def on_event(self, event: Any) -> None:
        data = json.loads(json.dumps(event.to_dict(), default=str))
        self.mapper.feed(data)
        kind = data.get("type")
        limit = self.trial.config.max_turns
        if limit is not None and self.mapper.turn_starts > limit:
            self.request_stop("execution_error", f"the session passed max_turns ({limit})")
        if self.budget_denied and kind in ("tool.execution_complete", "assistant.turn_start"):
            self.stop.set()
        if self.mapper.idle:
            self.idle.set()

    def pre_tool_use(self, hook_input: dict[str, Any], _ctx: Any) -> dict[str, Any] | None:
        budget = self.trial.config.tool_call_budget
        if budget is not None and sum(self.admitted.values()) >= budget:
            self.budget_denied = True
            if self.stop_reason is None:
                self.stop_reason = "tool_budget_exceeded"
                self.errors.append(f"the tool-call budget of {budget} was used up")
            return {"permissionDecision": "deny", "permissionDecisionReason": "tool-call budget exhausted"}
        agent = hook_input.get("agentId") or ROOT
        self.admitted[agent] = self.admitted.get(agent, 0) + 1
        return None

    def permission(self, request: Any, _invocation: Any) -> Any:
        kind = getattr(request, "kind", None)
        kind = getattr(kind, "value", kind)
        if kind in self.trial.config.deny_permissions:
            return PermissionDecisionReject(
                feedback=f"{kind} permission is denied by the trial's configuration"
            )
        return PermissionDecisionApproveOnce()


def _session_options(run: _Run, session_id: str) -> dict[str, Any]:
    config = run.trial.config
    prompt = config.system_prompt() if "system_message" not in config.extra_config else None
    options: dict[str, Any] = {
        "session_id": session_id,
        "on_permission_request": run.permission,
        "on_event": run.on_event,
        "hooks": {"on_pre_tool_use": run.pre_tool_use},
        "working_directory": str(run.trial.workdir),
        "enable_session_telemetry": False,
    }
    optional = {
        "model": config.model,
        "reasoning_effort": config.reasoning_effort,
        "provider": dict(config.provider) if config.provider is not None else None,
        "system_message": None if prompt is None else {"mode": "append", "content": prompt},
        "tools": list(config.tools) or None,
        "available_tools": list(config.available_tools) if config.available_tools is not None else None,
        "excluded_tools": list(config.excluded_tools) or None,
        "skill_directories": list(config.skill_directories) or None,
        "disabled_skills": list(config.disabled_skills) or None,
        "custom_agents": [dict(agent) for agent in config.agent_definitions] or None,
        "mcp_servers": {name: dict(server) for name, server in config.mcp_servers.items()} or None,
    }
    options.update({key: value for key, value in optional.items() if value is not None})
    options.update(config.extra_config)  # reserved keys were refused when the config was made
    return options


async def _settle(run: _Run, session: Any) -> None:
    try:
        await asyncio.wait_for(session.abort(), SETTLE_S)
        await asyncio.wait_for(run.idle.wait(), SETTLE_S)
    except Exception as exc:  # the CLI may already be gone; cleanup reports what matters
        run.errors.append(f"aborting the session did not finish cleanly: {exc}")


async def _drive(
    run: _Run, session: Any, discovery: SkillDiscovery | None, process: subprocess.Popen[bytes] | None
) -> None:
    if discovery is not None and discovery.errors:
        run.request_stop("execution_error", "skill check failed: " + "; ".join(discovery.errors))
        return
    await session.send(run.trial.prompt)
    exited = watch_exit(process) if process is not None else None
    waiters: set[asyncio.Future[Any]] = {
        asyncio.ensure_future(run.idle.wait()),
        asyncio.ensure_future(run.stop.wait()),
    }
    if exited is not None:
        waiters.add(exited)
    try:
        done, _ = await asyncio.wait(
            waiters, timeout=run.trial.timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        for waiter in waiters:
            waiter.cancel()
    if exited is not None and exited in done and not run.idle.is_set():
        run.cli_exited = True
        run.request_stop(
            "execution_error",
            f"the Copilot CLI exited during the trial ({describe_exit(exited.result())}); "
            "the events it sent before are kept",
        )
        return
    if not done:
        run.request_stop("timeout", f"the trial timed out after {run.trial.timeout_s:g} s")
    if run.stop.is_set() and not run.idle.is_set():
        await _settle(run, session)
    if run.stop_reason is None:
        run.stop_reason = "completed"


async def run_trial(pool: ServerPool, trial: Trial) -> CopilotResult:
    """Run one session and return its evidence; agent failures become results, never exceptions."""
    started = time.monotonic()
    run = _Run(trial)
    snapshot: JsonObject | None = None
    discovery: SkillDiscovery | None = None
    sink: AuditSink | None = None
    server = session = None
    config = trial.config
    try:
        snapshot = configuration_snapshot(
            config, working_directory=str(trial.workdir), timeout_s=trial.timeout_s
        )
        server = await pool.acquire(trial.cli_path, trial.env, config.audit_requests, trial.workdir)
        session_id = str(uuid.uuid4())
        if server.handler is not None:
            sink = AuditSink(session_id, lambda reason: run.request_stop("request_audit_error", reason))
            sink.tracker = LoadTracker(trial.inputs) if trial.inputs else None
            server.handler.sinks[session_id] = sink
        session = await server.client.create_session(**_session_options(run, session_id))
        if config.skill_directories:
            discovery = await discover_skills(session, config.skill_directories, config.disabled_skills)
        await _drive(run, session, discovery, cli_process(server.client))
    except asyncio.CancelledError:
        if session is not None:
            await asyncio.shield(_settle(run, session))
        await asyncio.shield(_cleanup(run, pool, server, session, sink))
        raise
    except Exception as exc:  # a failure of the CLI or SDK is this trial's result, not the runner's crash
        run.request_stop("execution_error", f"{type(exc).__name__}: {exc}")
    await _cleanup(run, pool, server, session, sink)
    run.mapper.close()
    result = build_result(
        run.mapper,
        config=config,
        agent_version=trial.agent_version,
        stop_reason=run.stop_reason or "execution_error",
        errors=run.errors,
        duration_ms=(time.monotonic() - started) * 1000,
        working_directory=str(trial.workdir),
        configuration=snapshot,
        discovery=discovery,
        audits=sink.records if sink is not None else {},
        admitted=run.admitted,
        output_dir=trial.output_dir,
        secrets=trial.secrets,
        effective_system_prompt=config.system_prompt() if snapshot is not None else None,
    )
    if sink is not None and sink.tracker is not None:
        # Only an audit that saw every request decides; one that refused a request decides nothing.
        result = replace(result, instructions_loaded=sink.tracker.result(audited=sink.error is None))
    return mask_record(result, Masker(trial.secrets))


async def _cleanup(run: _Run, pool: ServerPool, server: Any, session: Any, sink: AuditSink | None) -> None:
    failure: str | None = None
    if session is not None and not run.cli_exited:  # a CLI that is gone has no session to disconnect
        try:
            await asyncio.wait_for(session.disconnect(), SETTLE_S)
        except Exception as exc:
            failure = f"cleanup failed: disconnecting the session raised {type(exc).__name__}: {exc}"
    if server is not None:
        if sink is not None and server.handler is not None:
            server.handler.sinks.pop(sink.session_id, None)
        await pool.release(server)
    if failure is not None:
        run.stop_reason = "cleanup_error"
        run.errors.append(failure)
