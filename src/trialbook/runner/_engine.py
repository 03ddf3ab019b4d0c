"""Run a plan: trials of every eval × agent, concurrently, within the budget."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..evalfiles import EvalSpec, render_options, render_prompt
from ..evidence import AgentResult
from ..masking import Masker
from ..report.isolation import outside_notes
from ..sandbox import ISOLATION_BACKENDS, SandboxRemover, ShimConfig, hidden_paths
from ..scoring.stats import EarlyVerdict, early_verdict
from ..scoring.verdict import EXECUTION_FAILURES, Verdict, eval_verdict
from ._cancel import Cancellation
from ._events import ProgressSink, TrialFinished, TrialStarted
from ._explain import trial_failures, truncation_text
from ._judges import RunJudges, uses_judges
from ._ledger import BudgetLedger
from ._plan import AgentPool, PlanEntry
from ._trial import NotStarted, TrialOutcome, TrialRequest, run_trial, settle, trial_cost
from ._waves import Waves

if TYPE_CHECKING:
    from ..scoring.comparison import PairwiseJudged

__all__ = ["ControlOutcome", "EntryResult", "PlanRun", "RunSettings", "run_plan", "trial_request"]


@dataclass(frozen=True)
class ControlOutcome:
    """An eval's negative control: whether its assertions all held with no agent, and which held.

    ``key`` is the control's cache key; history keeps it with the outcome so the control runs once per
    key.
    """

    key: str
    vacuous: bool
    held: tuple[str, ...] = ()


@dataclass
class EntryResult:
    """What happened to one eval × agent of the plan."""

    entry: PlanEntry
    outcomes: list[TrialOutcome] = field(default_factory=list)
    unstarted: int = 0
    saved: int = 0
    """Trials adaptive trials did not start because the verdict was already decided."""
    decided: EarlyVerdict | None = None
    cancelled: int = 0
    """Trials a signal stopped or kept from starting."""
    control: ControlOutcome | None = None
    """The eval's negative control, when it ran now or history knows it for this cache key."""
    started_at: float = field(default_factory=time.time)
    rescored_from: str | None = None
    """The kept run whose recorded trials were re-checked for this result; ``None``: the agent ran."""
    pairwise: PairwiseJudged | None = None
    """A ``with`` arm's: what pairwise judges preferred once both arms ran; ``None``: not compared."""

    @property
    def planned(self) -> int:
        """Trials the eval asks for (its maximum, for adaptive trials)."""
        return self.entry.spec.trials

    @property
    def min_trials(self) -> int | None:
        """The first wave of adaptive trials; ``None`` when every trial runs."""
        return self.entry.spec.min_trials

    @property
    def settled(self) -> int:
        """Trials that finished, were left unstarted by the budget or a signal, or were saved."""
        return len(self.outcomes) + self.unstarted + self.saved + self.cancelled

    def decide(self) -> EarlyVerdict | None:
        """Whether adaptive trials may stop here: the verdict, once decided (see ``early_verdict``)."""
        least = self.entry.spec.min_trials
        stopped = self.unstarted + self.cancelled
        if self.decided is None and least is not None and len(self.outcomes) >= least and not stopped:
            self.decided = early_verdict(
                self.passed, len(self.outcomes), self.planned, self.entry.spec.pass_rate
            )
        return self.decided

    @property
    def passed(self) -> int:
        """Trials that passed."""
        return sum(1 for outcome in self.outcomes if outcome.passed)

    @property
    def verdict(self) -> Verdict:
        """The eval × agent verdict from its trials and threshold."""
        ordered = sorted(self.outcomes, key=lambda o: o.request.trial)
        verdict = eval_verdict(
            [o.result for o in ordered],
            [o.passed for o in ordered],
            planned=self.planned - self.saved,
            threshold=self.entry.spec.pass_rate,
        )
        if verdict in ("pass", "fail") and self.uncalibrated:
            return "judge_uncalibrated"
        if self.control is not None and self.control.vacuous and verdict in ("pass", "fail"):
            return "vacuous"
        return verdict

    @property
    def uncalibrated(self) -> tuple[str, ...]:
        """The judge checks whose panel missed a calibration example, by label, once each."""
        from ..assertions import is_uncalibrated

        labels = (r.label for o in self.outcomes for r in o.assertions if is_uncalibrated(r))
        return tuple(dict.fromkeys(labels))

    @property
    def failures(self) -> list[str]:
        """What went wrong, trial by trial: agent errors, failed checks and the evidence behind them."""
        lines: list[str] = []
        if self.verdict == "vacuous" and self.control is not None:
            held = self.control.held
            lines += [
                f"negative control: with no agent at all, this assertion held: {label}" for label in held
            ]
            lines += [] if held else ["negative control: no assertion to check, so any agent passes"]
        for outcome in sorted(self.outcomes, key=lambda o: o.request.trial):
            lines += trial_failures(
                outcome.request.trial,
                outcome.result,
                outcome.assertions,
                outcome.explanation,
                timeout_s=self.entry.spec.timeout_s,
            )
        return lines

    @property
    def notes(self) -> list[str]:
        """What a reader should know beyond the counts (see the table's note column)."""
        notes: list[str] = []
        if self.rescored_from is not None:
            cost = f", saving the ${self.cost_usd:.2f} its trials cost" if self.cost_usd else ""
            notes.append(
                f"rescored from the recorded trials of run {self.rescored_from}: no agent started{cost}"
            )
        if self.verdict == "judge_uncalibrated":
            notes.append(
                "judge uncalibrated: the panel graded its judge_examples wrong, so its verdicts do not "
                f"count ({', '.join(self.uncalibrated)})"
            )
        if self.verdict == "vacuous" and self.control is not None:
            held = ", ".join(self.control.held) or "no assertions"
            notes.append(f"vacuous: passes with no agent ({held} held on an untouched sandbox)")
        if self.saved:
            notes.append(f"decided after {len(self.outcomes)} of {self.planned} trials, {self.saved} saved")
        return notes

    @property
    def unused_shims(self) -> tuple[str, ...]:
        """Shims no trial of this eval × agent called (a shim one trial used is not worth a note)."""
        if not self.outcomes:
            return ()
        first, *rest = self.outcomes
        return tuple(name for name in first.unused_shims if all(name in o.unused_shims for o in rest))

    @property
    def cost_usd(self) -> float | None:
        """Known cost of the trials run; ``None`` when any trial's cost is unknown."""
        total = 0.0
        for outcome in self.outcomes:
            if outcome.cost_usd is None:
                return None
            total += outcome.cost_usd
        return total

    @property
    def judge_cost_usd(self) -> float | None:
        """What the judges cost, apart from the agents; ``None`` when any of it is unknown.

        A ``with`` arm's includes what its pairwise judges cost comparing it with the ``without`` arm,
        so every report that shows judge cost shows that too.
        """
        total = 0.0
        costs = [outcome.judge_cost_usd for outcome in self.outcomes]
        if self.pairwise is not None:
            costs.append(self.pairwise.judge_cost_usd)
        for cost in costs:
            if cost is None:
                return None
            total += cost
        return total

    @property
    def cost_estimated(self) -> bool:
        """Whether some trial's cost is an estimate from tokens rather than the agent's own figure."""
        return any(outcome.cost_estimated for outcome in self.outcomes)

    @property
    def duration_s(self) -> float:
        """Sum of trial durations (trials may overlap in wall time)."""
        return sum(outcome.duration_s for outcome in self.outcomes)


def _trial_folder(results_dir: Path, entry: PlanEntry, trial: int) -> Path:
    if entry.control:
        # Beside evals/, not in it: a negative control is no agent of the eval.
        return results_dir / "controls" / entry.spec.id / f"trial-{trial}"
    return results_dir / "evals" / entry.spec.id / entry.label / f"trial-{trial}"


def _requests(
    entry: PlanEntry,
    secret_values: Mapping[str, str],
    results_dir: Path,
    sandbox_root: Path | None,
    keep: bool,
    judges: RunJudges | None = None,
) -> list[TrialRequest]:
    spec: EvalSpec = entry.spec
    rendered = render_prompt(spec, secret_values)
    declared = entry.agent.options.get("env")
    env_values = render_options(declared, secret_values) if isinstance(declared, dict) else {}
    agent_env = {str(key): str(value) for key, value in env_values.items()}
    secrets = {name: secret_values[name] for name in spec.secrets if name in secret_values}
    return [
        trial_request(
            entry,
            n,
            _trial_folder(results_dir, entry, n),
            prompt=rendered.text,
            secrets=secrets,
            agent_env=agent_env,
            sandbox_root=sandbox_root,
            keep=keep,
            results_dir=results_dir,
            judges=judges,
        )
        for n in range(1, spec.trials + 1)
    ]


def trial_request(
    entry: PlanEntry,
    trial: int,
    folder: Path,
    *,
    prompt: str = "",
    secrets: Mapping[str, str] | None = None,
    agent_env: Mapping[str, str] | None = None,
    sandbox_root: Path | None = None,
    keep: bool = False,
    results_dir: Path | None = None,
    judges: RunJudges | None = None,
) -> TrialRequest:
    """Trial ``trial`` of ``entry``, its files in ``folder`` (re-scoring gives only what checks use).

    Under isolation the run's ``results_dir`` is among what the trial must not see.
    """
    spec: EvalSpec = entry.spec
    backend = ISOLATION_BACKENDS.get(entry.isolation)  # absent for "none": the runner's user
    hidden = results_dir.resolve() if results_dir is not None else None
    isolation = backend(hide=hidden_paths(hidden), network=entry.network) if backend else None
    return TrialRequest(
        eval_id=spec.id,
        agent_label=entry.label,
        trial=trial,
        prompt=prompt,
        template=spec.template,
        template_exclude=spec.template_exclude,
        shims=tuple(ShimConfig(s.name, s.mode, s.script) for s in spec.shims),
        secrets=secrets or {},
        agent_env=agent_env or {},
        assertions=spec.assertions,
        timeout_s=spec.timeout_s,
        max_cost_usd=spec.max_cost_usd,
        folder=folder,
        sandbox_root=sandbox_root,
        keep_sandbox=keep,
        instructions=spec.instructions,
        skills=spec.skills,
        output_limit=spec.output_limit,
        check_deadline_s=spec.check_deadline_s,
        isolation=isolation,
        judges=judges,
    )


def _label(request: TrialRequest) -> str:
    return f"{request.eval_id} [{request.agent_label}] trial {request.trial}"


def _summary_line(outcome: TrialOutcome) -> str:
    result = outcome.result
    # The table's word: a trial whose agent could not run is an error, not a failure of the prompt.
    errored = not result.success and result.stop_reason in EXECUTION_FAILURES
    status = "pass" if outcome.passed else "ERROR" if errored else "FAIL"
    stop = result.stop_reason or "unfinished"
    why = outcome.explanation
    # One line per trial; the other failed checks and the evidence follow in ``TrialFinished.details``.
    detail = f" — {why.headline}" if why is not None else ""
    cut = truncation_text(outcome.output_truncated)
    cut = f" — {cut}" if cut else ""
    return f"{status} ({stop}, {outcome.duration_s:.1f}s){detail}{cut}"


@dataclass(frozen=True)
class PlanRun:
    """What running a plan gave: each ``run`` entry's result, the budget's ledger, the controls' results."""

    results: list[EntryResult]
    ledger: BudgetLedger
    controls: list[EntryResult]


@dataclass(frozen=True)
class RunSettings:
    """What every trial of a plan shares: where its files go, its secrets, and how much may run at once."""

    pool: AgentPool
    secret_values: Mapping[str, str]
    masker: Masker
    results_dir: Path
    concurrency: int
    sink: ProgressSink
    sandbox_root: Path | None = None
    keep_sandboxes: bool = False
    cancel: Cancellation | None = None

    @property
    def width(self) -> int:
        """How many trials run at once (at least one)."""
        return max(1, self.concurrency)


async def run_plan(
    plan: Sequence[PlanEntry],
    settings: RunSettings,
    *,
    budget_usd: float | None,
    controls: Sequence[PlanEntry] = (),
    problems: list[str] | None = None,
) -> PlanRun:
    """Run every ``run`` entry's trials, at most ``settings.concurrency`` at once, until the budget is spent.

    Trials are interleaved across entries (trial 1 of every eval first) so a budget stop leaves each
    eval with some evidence rather than starving the evals that come last. An entry with adaptive trials
    (``min_trials``) runs in waves of ``min_trials``: a wave starts only once the one before it has
    finished, and not at all when the trials so far already decide the verdict. Once the run's
    cancellation is requested no trial starts and the running ones are cancelled; they count in
    ``cancelled``.

    ``controls`` are negative controls (one noop trial each); they cost nothing, run alongside without
    progress events, and come back apart. Sandboxes that could not be removed are named in ``problems``,
    one line each: the trials' verdicts stand.
    """
    scheduler = _Scheduler(settings, plan, controls, BudgetLedger(budget_usd))
    left = await scheduler.run()
    if problems is not None:
        problems.extend(left)
    return PlanRun(scheduler.results, scheduler.ledger, scheduler.controls)


class _Scheduler:
    """One run of a plan: the queue of trials, the places they run in, and the counts progress shows.

    Two semaphores of ``width`` places: ``running`` bounds the trials whose agent runs, ``ready`` the
    trials preparing a sandbox while they wait, so the next trial's sandbox is ready when a place frees
    and a budget stop wastes at most ``width`` prepared sandboxes.
    """

    def __init__(
        self,
        settings: RunSettings,
        plan: Sequence[PlanEntry],
        controls: Sequence[PlanEntry],
        ledger: BudgetLedger,
    ) -> None:
        self.settings = settings
        self.ledger = ledger
        self.results = [EntryResult(entry) for entry in plan if entry.action == "run"]
        self.controls = [EntryResult(entry) for entry in controls]
        # One client for the run: its cache serves an answer every trial would otherwise pay for again.
        uses = any(uses_judges(r.entry.spec.assertions) for r in self.results)
        self.judges = RunJudges(settings.masker, settings.secret_values) if uses else None
        self.queue = self._interleaved()
        self.total = len(self.queue)
        self.running = asyncio.Semaphore(settings.width)
        self.ready = asyncio.Semaphore(settings.width)
        # A finished trial's folder is removed while the next trial already runs (see SandboxRemover).
        self.remover = SandboxRemover(limit=2 * settings.width)
        self.waves = Waves(self.results)
        self.tasks: set[asyncio.Task[None]] = set()
        self.now_running = 0
        self.done = 0
        self.remaining = self.total

    def _interleaved(self) -> list[tuple[EntryResult, TrialRequest]]:
        """Every trial of every entry, trial 1 of each entry first, then trial 2, and so on."""
        s = self.settings
        per_entry = [
            _requests(r.entry, s.secret_values, s.results_dir, s.sandbox_root, s.keep_sandboxes, self.judges)
            for r in self.results
        ]
        queue: list[tuple[EntryResult, TrialRequest]] = []
        for depth in range(max((len(reqs) for reqs in per_entry), default=0)):
            queue += [
                (r, reqs[depth]) for r, reqs in zip(self.results, per_entry, strict=True) if depth < len(reqs)
            ]
        return queue

    async def run(self) -> list[str]:
        """Run the queue and the controls; return the sandboxes that could not be removed."""
        # Each running trial may hold a worker thread for a while (a `succeeds` check, a template copy):
        # asyncio's default pool (CPU count + 4 threads) would make trials wait for each other's threads.
        loop = asyncio.get_running_loop()
        loop.set_default_executor(
            ThreadPoolExecutor(max_workers=self.settings.width + 4, thread_name_prefix="trialbook-trial")
        )
        cancel = self.settings.cancel
        if cancel is not None:
            cancel.attach(loop, self._stop)
        try:
            await asyncio.gather(
                *(self._control(check) for check in self.controls),
                *(self._one(result, request) for result, request in self.queue),
            )
        finally:
            if cancel is not None:
                cancel.detach()
            # Every sandbox is gone before the run reports, whatever stopped it.
            left, interrupted = await settle(self.remover.close)
        if interrupted:
            raise asyncio.CancelledError
        for result in self.results:
            result.outcomes.sort(key=lambda o: o.request.trial)
        return left

    def _stop(self) -> None:
        for task in self.tasks:
            task.cancel()

    def refused(self, result: EntryResult) -> bool:
        """Count a trial that must not start (the run is cancelled or the budget spent); ``True`` if so."""
        cancel = self.settings.cancel
        if cancel is not None and cancel.requested:
            result.cancelled += 1
            return True
        if self.ledger.exhausted:
            result.unstarted += 1
            return True
        return False

    async def _one(self, result: EntryResult, request: TrialRequest) -> None:
        try:
            if await self.waves.needed(result, request.trial):
                await self._trial(result, request)
            else:
                self.remaining -= 1
        finally:
            # Whatever happened to the trial, the next wave may now look.
            await self.waves.settled(result)

    async def _trial(self, result: EntryResult, request: TrialRequest) -> None:
        await self.ready.acquire()
        slot = _Slot(self, result, request)
        try:
            if self.refused(result):
                self.remaining -= 1
                return
            agent = self.settings.pool.get(result.entry.agent)
            try:
                outcome = await run_trial(
                    request, agent, self.settings.masker, remover=self.remover, slot=slot
                )
            except NotStarted:
                return
            except asyncio.CancelledError:
                cancel = self.settings.cancel
                if cancel is None or not cancel.requested:
                    raise
                result.cancelled += 1  # stopped by the signal: not a finished trial
                return
        finally:
            if slot.preparing:
                self.ready.release()
        result.outcomes.append(outcome)
        if outcome.judge_calls:
            # The judges answered during the checks: their cost counts once the trial is written.
            self.ledger.record(f"{_label(request)} judges", outcome.judge_cost_usd, judges=True)
        self.done += 1
        self.settings.sink.trial_finished(self._finished(request, outcome))

    def _finished(self, request: TrialRequest, outcome: TrialOutcome) -> TrialFinished:
        return TrialFinished(
            eval_id=request.eval_id,
            agent=request.agent_label,
            trial=request.trial,
            passed=outcome.passed,
            stop_reason=outcome.result.stop_reason,
            duration_s=outcome.duration_s,
            cost_usd=outcome.cost_usd,
            summary=self.settings.masker.text(_summary_line(outcome)),
            done=self.done,
            total=self.total,
            details=(
                *(outcome.explanation.brief if outcome.explanation is not None else ()),
                *outside_notes(outcome.result),
            ),
        )

    async def _control(self, result: EntryResult) -> None:
        s = self.settings
        (request,) = _requests(result.entry, s.secret_values, s.results_dir, s.sandbox_root, False)
        async with self.running:
            outcome = await run_trial(request, s.pool.get(result.entry.agent), s.masker, remover=self.remover)
            result.outcomes.append(outcome)


class _Slot:
    """A place among the running trials (see ``TrialSlot``), bound to one trial of a scheduler."""

    def __init__(self, scheduler: _Scheduler, result: EntryResult, request: TrialRequest) -> None:
        self.scheduler, self.result, self.request = scheduler, result, request
        self.preparing = True  # holds a place in ``ready`` until it enters

    async def enter(self) -> None:
        """Take a running place; raise ``NotStarted`` when the run was cancelled or the budget spent."""
        s = self.scheduler
        await s.running.acquire()
        self.preparing = False
        s.ready.release()
        s.remaining -= 1
        if s.refused(self.result):
            s.running.release()
            raise NotStarted
        task = asyncio.current_task()
        assert task is not None
        s.tasks.add(task)
        s.now_running += 1
        request = self.request
        started = TrialStarted(
            request.eval_id, request.agent_label, request.trial, s.now_running, s.remaining
        )
        s.settings.sink.trial_started(started)

    def leave(self, agent_result: AgentResult | None) -> None:
        """Free the place; the trial's cost is counted first, so the next trial starts against it."""
        s = self.scheduler
        s.tasks.discard(asyncio.current_task())
        s.now_running -= 1
        if agent_result is not None:
            cost, estimated = trial_cost(agent_result)
            request = self.request
            s.ledger.record(_label(request), cost, estimated=estimated)
        s.running.release()
