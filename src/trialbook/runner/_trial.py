"""One trial: sandbox, agent, assertions, transcripts — and nothing left running afterwards."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..agents import Agent, AgentTask
from ..assertions import Assertion, Call
from ..evalfiles import CHECKS_BASE_S, InstructionFile, SkillFolder
from ..evidence import AgentResult, AssertionRecord
from ..masking import Masker
from ..sandbox import (
    DEFAULT_OUTPUT_LIMIT,
    IsolationBackend,
    OutputCapture,
    Sandbox,
    SandboxRemover,
    ShimConfig,
    create_sandbox,
)
from ..sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor
from ._deadline import within
from ._explain import Explanation
from ._isolated import isolated_evidence
from ._placing import place_inputs, skills_folder, with_loading
from ._verdicts import (
    Checked,
    CheckState,
    Recorded,
    check_trial,
    overran,
    record_trial,
    unused_shim_note,
    unused_shims,
)

if TYPE_CHECKING:
    from ..agents.judge_client import JudgeCall
    from ._judges import RunJudges

__all__ = [
    "NotStarted",
    "TrialOutcome",
    "TrialRequest",
    "TrialSlot",
    "run_trial",
    "settle",
    "unused_shim_note",
    "unused_shims",
]

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
    check_deadline_s: float = CHECKS_BASE_S
    """Seconds the trial's checks may take together once the agent finished (``limits.checks``)."""
    isolation: IsolationBackend | None = None
    """Settings of the trial's isolation apart from its own folder (known once the sandbox is made)."""
    judges: RunJudges | None = None
    """Who answers the trial's ``judge`` checks; ``None`` (a negative control): they record an error."""


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
    judge_calls: tuple[JudgeCall, ...] = ()
    """The requests the trial's ``judge`` checks made, in order."""
    pairwise_shown: tuple[tuple[int, str], ...] = ()
    """``(check index, material)`` its ``pairwise`` judge checks showed, masked and bounded."""

    @property
    def judge_cost_usd(self) -> float | None:
        """What the judges cost this trial (cached answers are free); ``None`` when some cost is unknown."""
        from ._judges import judge_cost

        return judge_cost(self.judge_calls)


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
        # A timeout block, not wait_for: no task of its own, so no extra event-loop turns per trial.
        async with asyncio.timeout(deadline):
            return await agent.run(task)
    except TimeoutError:
        message = f"the {agent.name} adapter did not stop within {BACKSTOP_S:.0f}s of the trial deadline"
        return _harness_failure(agent, message, "timeout", started, task.workdir)
    except Exception as exc:  # an adapter bug must not take the other trials down
        detail = "".join(traceback.format_exception_only(exc)).strip()
        message = f"the {agent.name} adapter raised {detail}"
        return _harness_failure(agent, message, "error", started, task.workdir)


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
    # The executor's future itself, with the caller's context (as ``to_thread`` passes it): no task
    # around a coroutine, which would cost the event loop another turn and a quarter more per hop.
    context = contextvars.copy_context()
    future = asyncio.get_running_loop().run_in_executor(None, context.run, function)
    cancelled = False
    while not future.done():
        try:
            await asyncio.shield(future)
        except asyncio.CancelledError:
            # Even when the function finished in the same turn: the cancellation is the caller's, and
            # dropping it would let a Ctrl-C pass by a trial that then runs its agent to the end.
            cancelled = True
    return future.result(), cancelled


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


async def _prepare(request: TrialRequest) -> tuple[Sandbox, bool]:
    """The trial's sandbox, and whether a cancellation arrived while it was made (see :func:`settle`).

    Making folders and copying a template wait for the disk, so that happens in a worker thread while
    the event loop serves the running trials.
    """
    return await settle(functools.partial(_open_sandbox, request))


class NotStarted(Exception):
    """A slot would not let the trial start: the run was cancelled, or the budget is spent."""


class TrialSlot(Protocol):
    """One of the run's ``concurrency`` places, held while the agent and the checks run.

    Preparing the sandbox comes before :meth:`enter` and writing the transcripts and cleaning up after
    :meth:`leave`, so a trial's file-system work overlaps other trials' agents instead of holding a place.
    """

    async def enter(self) -> None:
        """Wait for a place; raise :class:`NotStarted` if the trial must not start after all."""

    def leave(self, result: AgentResult | None) -> None:
        """Give the place back, with the agent's result (its cost counts now) if it got that far."""


async def run_trial(
    request: TrialRequest,
    agent: Agent,
    masker: Masker,
    *,
    remover: SandboxRemover | None = None,
    slot: TrialSlot | None = None,
) -> TrialOutcome:
    """Run one trial end to end; the sandbox is torn down (or kept) whatever happens.

    With ``remover`` the trial's processes are still ended before it returns, but its sandbox folder is
    handed to ``remover`` and removed in the background (the caller waits for it with
    :meth:`SandboxRemover.close`); without one it is removed here. With ``slot`` the agent and the checks
    run inside it (see :class:`TrialSlot`); :class:`NotStarted` from it is raised once the sandbox is gone.
    """
    preparing = time.monotonic()
    scope = supervisor().open_trial()
    capture = OutputCapture(request.output_limit, masker)
    try:
        sandbox, cancelled = await _prepare(request)
    except BaseException:
        scope.close()
        raise
    if cancelled:
        await settle(functools.partial(_clean_up, scope, sandbox, False))
        raise asyncio.CancelledError
    # Set last, so an eval's env cannot take a process out of the trial.
    sandbox.env[TRIAL_MARKER] = scope.marker
    prepared_s = time.monotonic() - preparing
    started = time.monotonic()
    kept: Path | None = None
    checked: Checked | None = None
    result: AgentResult | None = None
    try:
        if slot is not None:
            await slot.enter()
            started = time.monotonic()
        try:
            result = await _agent_run(request, agent, masker, sandbox, capture)
            checked = await _check(request, agent, masker, scope, sandbox, result, capture)
        finally:
            if slot is not None:
                slot.leave(result)
    finally:
        write = (
            None if checked is None else functools.partial(record_trial, request, checked, masker, capture)
        )
        recorded: Recorded | None
        # In a worker thread, like the sandbox: the slot is free already, and the disk may be slow.
        finish = functools.partial(_finish, scope, sandbox, request.keep_sandbox, remover, write)
        (closed, recorded), cancelled = await settle(finish)
        kept = closed if request.keep_sandbox else None
    if cancelled:
        raise asyncio.CancelledError
    assert recorded is not None  # checked, so written
    duration_s = prepared_s + time.monotonic() - started
    return _outcome(request, recorded, scope, sandbox, kept, duration_s)


def _outcome(
    request: TrialRequest,
    recorded: Recorded,
    scope: TrialScope,
    sandbox: Sandbox,
    kept: Path | None,
    duration_s: float,
) -> TrialOutcome:
    """The trial's outcome from what was recorded, with how its processes and sandbox were handled."""
    cost, estimated = trial_cost(recorded.result)
    return TrialOutcome(
        request=request,
        result=recorded.result,
        assertions=recorded.records,
        calls=recorded.calls,
        passed=recorded.passed,
        cost_usd=cost,
        cost_estimated=estimated,
        duration_s=duration_s,
        sandbox_path=kept,
        unused_shims=recorded.unused,
        explanation=recorded.explanation,
        process_cleanup=scope.mechanism,
        stray_processes_killed=scope.killed,
        sandbox_copy=sandbox.copy,
        output_truncated=recorded.truncated,
        judge_calls=recorded.judge_calls,
        pairwise_shown=recorded.pairwise_shown,
    )


async def _check(
    request: TrialRequest,
    agent: Agent,
    masker: Masker,
    scope: TrialScope,
    sandbox: Sandbox,
    result: AgentResult,
    capture: OutputCapture,
) -> Checked:
    """Sweep what the agent left running, then check, within the trial's check deadline.

    The sweep runs in a worker thread: killing waits for the dying. The checks run in a
    daemon thread (see :mod:`._deadline`): past ``limits.checks`` the trial ends ``error`` naming the
    check that was running, and a signal stops the wait at once, whatever the check is doing.
    """
    # What the agent left running (in its own session, double-forked) must not change the files the
    # checks read; commands the checks start carry the marker and end with the trial.
    await asyncio.to_thread(scope.sweep)
    state = CheckState()
    work = functools.partial(check_trial, request, agent, masker, sandbox, result, capture, state)
    try:
        return await within(work, request.check_deadline_s)
    except TimeoutError:
        return overran(request, result, state)


def _finish(
    scope: TrialScope,
    sandbox: Sandbox,
    keep: bool,
    remover: SandboxRemover | None,
    write: Callable[[], Recorded] | None,
) -> tuple[Path | None, Recorded | None]:
    closed = _clean_up(scope, sandbox, keep, remover)
    return closed, (write() if write is not None else None)


async def _agent_run(
    request: TrialRequest, agent: Agent, masker: Masker, sandbox: Sandbox, capture: OutputCapture
) -> AgentResult:
    try:
        inputs = place_inputs(sandbox.workdir, request.instructions, request.skills, skills_folder(agent))
    except (OSError, ValueError) as exc:
        error = f"placing the eval's instruction files and skills failed: {exc}"
        return _harness_failure(agent, error, "error", time.monotonic(), sandbox.workdir)
    isolation = request.isolation
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
        isolation=None if isolation is None else isolation.in_trial(sandbox.path, sandbox.covers),
    )
    result = with_loading(await _run_agent(agent, task), inputs)
    if task.isolation is not None:  # its processes have ended with their PID namespace
        result = await asyncio.to_thread(isolated_evidence, result, task.isolation)
    return result
