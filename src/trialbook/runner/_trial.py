"""One trial: sandbox, agent, assertions, transcripts — and nothing left running afterwards."""

from __future__ import annotations

import asyncio
import functools
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from ..agents import Agent, AgentTask
from ..assertions import Assertion, Call, evaluate_all
from ..evidence import AgentResult, AssertionRecord
from ..masking import Masker, masked_call, masked_record, masked_result
from ..sandbox import Sandbox, ShimConfig, create_sandbox
from ..sandbox._capture import DEFAULT_OUTPUT_LIMIT, OutputCapture
from ..sandbox._changes import CHANGES_FILE, record_changes
from ..sandbox._remover import SandboxRemover
from ..sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor
from ..spec import InstructionFile, SkillFolder
from ..verdict import trial_passed
from ._explain import Explanation, explain_trial
from ._inputs import place_inputs, placed_sources, skills_folder, with_loading
from ._outputs import write_json, write_trial_files

__all__ = ["TrialOutcome", "TrialRequest", "run_trial", "settle", "unused_shim_note", "unused_shims"]

_T = TypeVar("_T")

BACKSTOP_S = 30.0
"""Extra time an adapter gets past the trial deadline to stop on its own before the runner cancels it."""


@dataclass(frozen=True, kw_only=True)
class TrialRequest:
    """Everything one trial needs, already rendered."""

    eval_id: str
    agent_label: str
    trial: int
    prompt: str
    template: Path | None
    template_exclude: tuple[str, ...]
    shims: tuple[ShimConfig, ...]
    secrets: Mapping[str, str]
    agent_env: Mapping[str, str]
    assertions: tuple[Assertion, ...]
    timeout_s: float
    max_cost_usd: float | None
    folder: Path
    sandbox_root: Path | None
    keep_sandbox: bool
    instructions: tuple[InstructionFile, ...] = ()
    skills: tuple[SkillFolder, ...] = ()
    output_limit: int = DEFAULT_OUTPUT_LIMIT


@dataclass(frozen=True)
class TrialOutcome:
    """A finished trial. ``cost_usd`` is reported or estimated cost, ``None`` when unknown."""

    request: TrialRequest
    result: AgentResult
    assertions: tuple[AssertionRecord, ...]
    calls: tuple[Call, ...]
    passed: bool
    cost_usd: float | None
    cost_estimated: bool
    duration_s: float
    sandbox_path: Path | None
    unused_shims: tuple[str, ...] = ()
    explanation: Explanation | None = None
    """Why the trial failed (``None`` when it passed), masked and bounded."""
    process_cleanup: str = "marker"
    stray_processes_killed: int = 0
    sandbox_copy: str | None = None
    """How the template came into the sandbox: ``reflink``, ``copy``, or ``None`` without a template."""
    output_truncated: dict[str, int] | None = None
    """Bytes dropped from each captured stream (``0``: kept whole); ``None`` when none was captured."""


def _harness_failure(agent: Agent, error: str, reason: str, started: float, workdir: Path) -> AgentResult:
    return AgentResult(
        agent_name=agent.name,
        agent_version=None,
        success=False,
        error=error,
        stop_reason="timeout" if reason == "timeout" else "execution_error",
        model_used=None,
        duration_ms=(time.monotonic() - started) * 1000,
        working_directory=str(workdir),
        capture_errors=(error,),
    )


async def _run_agent(agent: Agent, task: AgentTask) -> AgentResult:
    started = time.monotonic()
    deadline = None if task.timeout_s is None else task.timeout_s + BACKSTOP_S
    try:
        return await asyncio.wait_for(agent.run(task), deadline)
    except TimeoutError:
        message = f"the {agent.name} adapter did not stop within {BACKSTOP_S:.0f}s of the trial deadline"
        return _harness_failure(agent, message, "timeout", started, task.workdir)
    except Exception as exc:  # an adapter bug must not take the other trials down
        detail = "".join(traceback.format_exception_only(exc)).strip()
        message = f"the {agent.name} adapter raised {detail}"
        return _harness_failure(agent, message, "error", started, task.workdir)


def unused_shims(shims: tuple[ShimConfig, ...], calls: tuple[Call, ...]) -> tuple[str, ...]:
    """The declared shims the agent never called, in declaration order."""
    called = {call.argv[0] for call in calls if call.argv}
    return tuple(shim.name for shim in shims if shim.name not in called)


def unused_shim_note(name: str) -> str:
    """Why an unused shim is worth a look: the tool was not needed, or the agent went around ``PATH``."""
    return (
        f"shim {name} was declared but never called: the agent did not need it, or reached it without "
        "PATH (an absolute path, command -p, an activated virtualenv)"
    )


def trial_cost(result: AgentResult) -> tuple[float | None, bool]:
    """``(cost, estimated)``: the agent's own figure, else an estimate from tokens, else unknown.

    The evidence keeps the agent's figure only (``None`` when it reports none); the estimate serves the
    budget and the summary, which says which trials it stands in for.
    """
    if result.cost_usd is not None:
        return result.cost_usd, False
    estimate = result.estimated_cost().usd
    return estimate, estimate is not None


def _clean_up(
    scope: TrialScope, sandbox: Sandbox, keep: bool, remover: SandboxRemover | None = None
) -> Path | None:
    # Processes first: one still running could write into the folder while it is removed.
    try:
        scope.close()
    finally:
        if remover is not None and not keep:
            remover.remove(sandbox)  # nothing of the trial runs any more: the folder can go later
            closed = None
        else:
            closed = sandbox.close(keep=keep)
    return closed


async def settle(function: Callable[[], _T]) -> tuple[_T, bool]:
    """Run ``function`` in a thread to its end even if the trial is cancelled meanwhile.

    Returns its result and whether a cancellation arrived, for the caller to re-raise once what was
    made is cleaned up: a sandbox half-made or half-removed must not be left behind by a Ctrl-C.
    """
    task = asyncio.ensure_future(asyncio.to_thread(function))
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                break
            cancelled = True
    return task.result(), cancelled


def _open_sandbox(request: TrialRequest) -> Sandbox:
    request.folder.mkdir(parents=True, exist_ok=True)
    return create_sandbox(
        root=request.sandbox_root,
        template=request.template,
        exclude=request.template_exclude,
        shims=request.shims,
        secrets=request.secrets,
        extra_env=request.agent_env,
    )


@dataclass(frozen=True)
class _Checked:
    """What the checks made of a finished agent run, masked and written to the trial folder."""

    result: AgentResult
    records: tuple[AssertionRecord, ...]
    calls: tuple[Call, ...]
    passed: bool
    unused: tuple[str, ...]
    explanation: Explanation | None
    truncated: dict[str, int] | None


def _check(
    request: TrialRequest,
    agent: Agent,
    masker: Masker,
    scope: TrialScope,
    sandbox: Sandbox,
    result: AgentResult,
    capture: OutputCapture,
) -> _Checked:
    """Everything between the agent's end and the cleanup, in one worker thread (one hand-off, not six)."""
    # What the agent left running (in its own session, double-forked) must not change the files the
    # checks read; commands the checks start carry the marker and end with the trial.
    scope.sweep()
    # Snapshot the log now: commands that checks run later go through the shims too, but they are
    # not the agent's calls.
    agent_calls = sandbox.call_log.read_bytes() if sandbox.call_log.exists() else b""
    # Likewise the file changes: what the agent left behind, before checks run their own commands.
    placed = placed_sources(request.instructions, request.skills, skills_folder(agent))
    changes = record_changes(request.template, sandbox.workdir, masker, placed)
    finished = sandbox.finished(result, capture)
    if finished.call_log_problems:
        # A torn or unreadable call-log line means the record of what the agent ran is incomplete.
        problems = tuple(f"call log: {problem}" for problem in finished.call_log_problems)
        result = replace(result, capture_errors=(*result.capture_errors, *problems))
        finished = sandbox.finished(result, capture)
    calls = tuple(finished.calls)  # the agent's calls: read before the checks run their commands
    unused = unused_shims(request.shims, calls)
    records = evaluate_all(request.assertions, finished)
    passed = trial_passed(result, [record.passed for record in records])
    # Checks saw the real values; from here on, everything the trial captured is masked, before any
    # of it is cut into a failure line, escaped into a report or written.
    result = masked_result(result, masker)
    records = tuple(masked_record(record, masker) for record in records)
    calls = tuple(masked_call(call, masker) for call in calls)
    explanation = None
    truncated = capture.truncated
    if not passed:
        explanation = explain_trial(
            result, records, calls, masker, timeout_s=request.timeout_s, folder=request.folder,
            truncated=truncated,
        )  # fmt: skip
    notes = [unused_shim_note(name) for name in unused]
    write_trial_files(
        request.folder, result, records, agent_calls, masker, notes=notes, output_truncated=truncated
    )
    write_json(request.folder / CHANGES_FILE, changes, masker)
    return _Checked(result, records, calls, passed, unused, explanation, truncated)


async def run_trial(
    request: TrialRequest, agent: Agent, masker: Masker, *, remover: SandboxRemover | None = None
) -> TrialOutcome:
    """Run one trial end to end; the sandbox is torn down (or kept) whatever happens.

    With ``remover`` the trial's processes are still ended before it returns, but its sandbox folder is
    handed to ``remover`` and removed in the background (the caller waits for it with
    :meth:`SandboxRemover.close`); without one it is removed here.
    """
    started = time.monotonic()
    scope = supervisor().open_trial()
    capture = OutputCapture(request.output_limit, masker)
    try:
        sandbox, cancelled = await settle(functools.partial(_open_sandbox, request))
    except BaseException:
        scope.close()
        raise
    if cancelled:
        await settle(functools.partial(_clean_up, scope, sandbox, False))
        raise asyncio.CancelledError
    # Set last, so an eval's env cannot take a process out of the trial.
    sandbox.env[TRIAL_MARKER] = scope.marker
    kept: Path | None = None
    try:
        placing_error: str | None = None
        try:
            inputs = place_inputs(sandbox.workdir, request.instructions, request.skills, skills_folder(agent))
        except (OSError, ValueError) as exc:
            inputs, placing_error = (), f"placing the eval's instruction files and skills failed: {exc}"
        task = AgentTask(
            prompt=request.prompt,
            workdir=sandbox.workdir,
            home=sandbox.home,
            env=dict(sandbox.env),
            output_dir=request.folder,
            timeout_s=request.timeout_s,
            max_cost_usd=request.max_cost_usd,
            eval_id=request.eval_id,
            trial=request.trial,
            masker=masker,
            inputs=inputs,
            capture=capture,
        )
        if placing_error is None:
            result = with_loading(await _run_agent(agent, task), inputs)
        else:
            result = _harness_failure(agent, placing_error, "error", time.monotonic(), sandbox.workdir)
        checked = await asyncio.to_thread(_check, request, agent, masker, scope, sandbox, result, capture)
    finally:
        closed, cancelled = await settle(
            functools.partial(_clean_up, scope, sandbox, request.keep_sandbox, remover)
        )
        kept = closed if request.keep_sandbox else None
    if cancelled:
        raise asyncio.CancelledError
    result = checked.result
    cost = trial_cost(result)
    return TrialOutcome(
        request=request,
        result=result,
        assertions=checked.records,
        calls=checked.calls,
        passed=checked.passed,
        cost_usd=cost[0],
        cost_estimated=cost[1],
        duration_s=time.monotonic() - started,
        sandbox_path=kept,
        unused_shims=checked.unused,
        explanation=checked.explanation,
        process_cleanup=scope.mechanism,
        stray_processes_killed=scope.killed,
        sandbox_copy=sandbox.copy,
        output_truncated=checked.truncated,
    )
