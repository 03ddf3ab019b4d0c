"""``trialbook.run``: the one library call behind ``trialbook eval``, ``trialbook ci`` and the benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .._util.blocking import run_blocking
from ..agents import AgentNames
from ..errors import BudgetForecastError, ConfigError, ExitCode, RunAbortedError, UsageError
from ..evalfiles import EvalSpec, load_evals
from ..evidence import JsonObject, SuiteReport, publish_json, suite_to_json
from ..history import HistoryLine, HistoryStore, NetworkTimeouts, open_store
from ..masking import Masker
from ..report.isolation import isolation_label, isolation_text
from ..sandbox.leftovers import Swept, sweep
from ..select import head_commit
from ._cancel import current_cancellation
from ._controls import apply_controls, plan_controls
from ._engine import ControlOutcome, EntryResult, RunSettings, run_plan
from ._events import Notice, ProgressSink, TrialFinished, TrialStarted
from ._folder import (
    StagedFolder,
    check_owned,
    output_file_problem,
    ownership_problem,
    parents_problem,
    unusable_path,
)
from ._forecast import Forecast, forecast
from ._guards import local_note, refusals, refuse_or_check, unavailable_notes
from ._history import base_history, ci_run_url, expected_seconds, pending_lines, recent_lines, record, sync
from ._isolation import resolve_isolation
from ._judges import uses_judges
from ._ledger import BudgetLedger
from ._manifest import MANIFEST, build_manifest
from ._options import RunOptions
from ._outputs import write_json
from ._pairwise import judge_pairs
from ._plan import AgentPool, PlanEntry, build_plan
from ._rescore import plan_rescores, recorded_sources, write_rescored
from ._runs import begin_run, finish_run, latest_problem, new_run_id, run_folders, selection_for
from ._secrets import run_secrets
from ._suite import build_suite
from ._triggers import trigger_groups

__all__ = ["RunReport", "SilentSink", "leftover_folders", "load_specs", "run", "sweep_leftovers"]


class SilentSink:
    """A progress sink that ignores everything (library use, tests)."""

    def trial_started(self, event: TrialStarted) -> None:
        """Ignore."""

    def trial_finished(self, event: TrialFinished) -> None:
        """Ignore."""


@dataclass(frozen=True)
class RunReport:
    """Everything a front end needs to report a run.

    Frozen: each step of :func:`run` returns a new report with what it learnt (``dataclasses.replace``),
    so a front end holding one reads what that step decided, never a value a later step is changing.
    """

    plan: tuple[PlanEntry, ...]
    results: tuple[EntryResult, ...] = ()
    ledger: BudgetLedger = field(default_factory=lambda: BudgetLedger(None))
    suite: SuiteReport | None = None
    suite_path: Path | None = None
    masker: Masker = field(default_factory=Masker)
    dry_run: bool = False
    history: HistoryStore | None = None
    history_error: str | None = None
    durability_error: str | None = None
    """Why the finished run's folder may not be on disk: flushing it reported a write error."""
    history_problems: tuple[str, ...] = ()
    base_lines: dict[str, HistoryLine] = field(default_factory=dict)
    refusals: tuple[str, ...] = ()
    """For a dry run: every reason the real run would refuse to start (it then exits 2)."""
    base_windows: dict[str, list[HistoryLine]] = field(default_factory=dict)
    controls: tuple[PlanEntry, ...] = ()
    """Negative controls to run (one noop trial per eval whose control history does not know)."""
    known_controls: dict[str, ControlOutcome] = field(default_factory=dict)
    """Negative-control outcomes history already holds for this run's keys, by eval id."""
    forecast: Forecast | None = None
    """Expected cost and wall time of the ``run`` entries, from history (``unknown`` without it)."""
    over_budget: str | None = None
    """Why the forecast is above ``--budget-usd``, when it is."""
    run_id: str | None = None
    run_folder: Path | None = None
    """The finished run's folder (``--results-dir``, or the kept run ``latest`` now names)."""
    manifest: JsonObject | None = None
    history_lines: tuple[HistoryLine, ...] | None = None
    """The lines this run records, decided once (they are in the manifest too)."""
    cancelled_by: int | None = None
    """The signal that cancelled the run (``signal.SIGINT``, ``signal.SIGTERM``), if one did."""
    warnings: tuple[str, ...] = ()
    noticed: tuple[str, ...] = ()
    """The ``warnings`` already sent to the run's ``notice`` before the first trial, so not to repeat."""
    nothing_to_rerun: str | None = None
    """``--last-failed`` found no failure in the latest run: why nothing ran (and no run was kept)."""
    rescored: dict[str, EntryResult] = field(default_factory=dict)
    """Pairs re-checked from a kept run's recorded trials instead of run (see ``_rescore``), by key."""
    rescored_run: str | None = None
    """The run ``trialbook rescore`` re-checked (``None`` for ``eval`` and ``ci``)."""

    @property
    def exit_code(self) -> int:
        """0 all passed (cached included), 1 a failure or error, 3 the budget left trials unstarted.

        History that was not shared and a run folder the disk may not hold are errors (1) too.

        A run cancelled by a signal exits ``128 + signal`` (130 for SIGINT, 143 for SIGTERM) whatever
        its verdicts, as a shell reports a process that signal ended.
        """
        if self.cancelled_by is not None:
            return 128 + self.cancelled_by
        # A compared eval's without arm is a measurement, never a failure of the run (docs/instructions.md);
        # so is one query of a trigger eval: the group's recall and precision decide (docs/triggers.md).
        verdicts = [result.verdict for result in self.results if _decides(result.entry)]
        cached_failures = [
            e
            for e in self.plan
            if e.action == "cached" and _decides(e) and getattr(e.last, "verdict", "") == "fail"
        ]
        failing = ("fail", "error", "vacuous", "judge_uncalibrated")
        trouble = self.history_error or self.durability_error
        groups = trigger_groups(self.plan, self.results) if any(e.spec.trigger for e in self.plan) else []
        if any(group.verdict in ("fail", "error") for group in groups):
            return ExitCode.FAILED
        if any(v in failing for v in verdicts) or cached_failures or trouble:
            return ExitCode.FAILED
        if any(v == "incomplete" for v in verdicts):
            return ExitCode.BUDGET
        return ExitCode.OK


def _decides(entry: PlanEntry) -> bool:
    """Whether the pair's own verdict counts in the exit code (measurements' verdicts do not)."""
    return entry.arm != "without" and entry.spec.trigger is None


def leftover_folders(options: RunOptions) -> list[Path]:
    """Where a killed run may have left temp files of interrupted writes."""
    results = options.owned_folder.resolve()
    folders = [results, results.parent]
    folders += [path.resolve().parent for path in (options.junit, options.summary) if path is not None]
    if options.history_dir is not None:
        folders.append(options.history_dir.resolve())
    return folders


def sweep_leftovers(options: RunOptions) -> Swept:
    """Remove the sandboxes and temp files of trialbook processes that were killed (see ``leftovers``)."""
    return sweep(file_folders=leftover_folders(options))


def load_specs(options: RunOptions, agent_names: AgentNames | None = None) -> list[EvalSpec]:
    """Load every eval under the given paths, or fail with every problem at once."""
    missing = [str(path) for path in options.paths if not path.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {', '.join(missing)}")
    specs = load_evals(
        list(options.paths), known_agents=agent_names if agent_names is not None else AgentNames()
    )
    if not specs:
        shown = ", ".join(str(path) for path in options.paths)
        raise UsageError(f"no eval files (*.eval.yaml, *.eval.py) found under {shown}")
    return specs


def run(
    options: RunOptions,
    sink: ProgressSink | None = None,
    notice: Callable[[Notice], None] | None = None,
    *,
    specs: Sequence[EvalSpec] | None = None,
) -> RunReport:
    """Load, plan and run evals as ``options`` say; write the results folder and history; report.

    ``notice`` receives what a front end shows before the first trial: the forecast, and a warning when
    it is above the budget. ``specs`` are the evals :func:`load_specs` loaded from ``options.paths``
    already (a caller that needed them first, for its secret masks), so eval files are read, and
    ``*.eval.py`` files executed, once. Raises :class:`~trialbook.errors.TrialbookError` subclasses for
    bad input and refused runs (and, with ``budget_strict``, a forecast above the budget), before any
    trial starts.
    """
    started = time.time()
    unusable = _unusable_paths(options)
    if unusable:
        raise UsageError("\n".join(unusable))
    agent_names = AgentNames()  # looked up once, and only if an eval or --agent names a registered agent
    specs = list(specs) if specs is not None else load_specs(options, agent_names)
    # Fed once, before any trial: whatever runs later can only print secrets it already knows of. A value
    # too short to mask refuses the run here, before history is opened or anything is started.
    secrets = run_secrets(specs, options.environ, options.github_token)
    if secrets.problems and not options.dry_run:
        raise ConfigError(secrets.problems)
    if not options.dry_run:
        sweep_leftovers(options)
    secret_names = sorted({name for spec in specs for name in spec.secrets})
    secret_values = {name: options.environ[name] for name in secret_names if name in options.environ}
    pool = AgentPool(secret_values, secret_names)
    masker = secrets.masker
    store = open_store(
        history_dir=options.history_dir,
        history_branch=options.history_branch,
        repo_path=options.repo,
        push=options.push,
        token=options.github_token,
        offline=not options.record_history,
        timeouts=NetworkTimeouts.resolve(
            options.git_connect_timeout_s, options.git_timeout_s, options.environ
        ),
    )
    try:
        report = _plan(options, specs, pool, store, agent_names, notice, masker)
        report = replace(report, warnings=tuple(secrets.warnings))
        runnable = [entry for entry in report.plan if entry.action == "run" and entry.rescore is None]
        assert options.rescore_run is None or not runnable  # re-scoring never starts an agent
        if options.dry_run:
            return _dry_run(report, options, runnable, pool, secrets.problems)
        if report.nothing_to_rerun is not None:
            return report  # no run folder: `latest` keeps naming the run the user means
        report = _before_trials(report, options, runnable, pool, notice or (lambda _: None))
        report = _execute(report, options, pool, secret_values, sink or SilentSink(), started)
        if store is not None and options.record_history:
            report = record(report, store, options)
        return report
    finally:
        run_blocking(pool.aclose())
        if store is not None:
            store.close()


def _dry_run(
    report: RunReport,
    options: RunOptions,
    runnable: list[PlanEntry],
    pool: AgentPool,
    secret_problems: list[str],
) -> RunReport:
    """What the real run would refuse (``refusals``) and warn of, without starting anything."""
    kind = "run" if options.results_dir is not None else "runs"
    owner = ownership_problem(options.owned_folder, options.owned_label, kind)
    refused = [*([owner] if owner else []), *_output_problems(options), *secret_problems]
    refused += refusals(options, runnable, pool)
    if report.over_budget and options.budget_strict:
        refused.append(f"{report.over_budget}; --budget-strict would start no trial")
    note = local_note(options, runnable)
    warnings = [*report.warnings, *unavailable_notes(options, runnable, pool), *([note] if note else [])]
    return replace(report, refusals=tuple(refused), warnings=tuple(warnings))


def _before_trials(
    report: RunReport,
    options: RunOptions,
    runnable: list[PlanEntry],
    pool: AgentPool,
    notice: Callable[[Notice], None],
) -> RunReport:
    """Refuse what must not run (a folder not ours, unwritable outputs, a strict budget); say the forecast.

    Then settle each runnable pair's isolation and check its agent can run, warning of what cannot.
    """
    kind = "run" if options.results_dir is not None else "runs"
    check_owned(options.owned_folder, options.owned_label, kind)
    unwritable = _output_problems(options)
    if unwritable:
        raise UsageError("\n".join(unwritable))
    if report.over_budget and options.budget_strict:
        raise BudgetForecastError(f"{report.over_budget}; --budget-strict: no trial was started")
    if runnable and report.forecast is not None:
        notice(Notice("info", report.forecast.describe()))
        if report.over_budget:
            notice(Notice("warning", report.over_budget))
    if not runnable:
        return report
    plan, isolation_notes = resolve_isolation(options, list(report.plan), pool)
    runnable = [entry for entry in plan if entry.action == "run"]
    said = (*isolation_notes, *refuse_or_check(options, runnable, pool))
    for warning in said:
        notice(Notice("warning", warning))
    started = [e for e in runnable if e.rescore is None]  # re-checked trials start no agent
    ran = isolation_text([(e.spec.id, e.label, isolation_label(e.isolation, e.network)) for e in started])
    if ran is not None:
        notice(Notice("info", f"isolation: {ran}"))
    return replace(
        report, plan=tuple(plan), warnings=(*report.warnings, *said), noticed=(*report.noticed, *said)
    )


def _unusable_paths(options: RunOptions) -> list[str]:
    """The paths of the run's options that name nothing usable (loops of links, names too long)."""
    paths = [(options.owned_label, options.owned_folder), ("--junit", options.junit)]
    paths += [("--summary", options.summary), ("--history-dir", options.history_dir)]
    found = [unusable_path(path, label) for label, path in paths if path is not None]
    return [problem for problem in found if problem is not None]


def _output_problems(options: RunOptions) -> list[str]:
    """Why the run's folder, ``latest``, ``--junit`` or ``--summary`` could not be written: found first."""
    files = (("--junit", options.junit), ("--summary", options.summary))
    found = [output_file_problem(path, option) for option, path in files if path is not None]
    found.append(parents_problem(options.owned_folder.resolve(), options.owned_label))
    if options.results_dir is None:
        found.append(latest_problem(options.runs_dir.resolve()))
    return [problem for problem in found if problem is not None]


def _plan(
    options: RunOptions,
    specs: list[EvalSpec],
    pool: AgentPool,
    store: HistoryStore | None,
    agent_names: AgentNames,
    notice: Callable[[Notice], None] | None = None,
    masker: Masker | None = None,
) -> RunReport:
    changed: dict[str, str] | None = None
    unchanged: dict[str, str] | None = None
    if options.changed:
        from ..select import BaseTree, changed_evals  # reads git objects: pygit2 only for --changed

        changed, unchanged = changed_evals(specs, BaseTree(options.repo, options.base))
    if store is not None and not options.dry_run:
        trouble = sync(store)
        if trouble is not None and notice is not None:
            notice(Notice("warning", f"history: {trouble}; planning with the local history only"))
    selection = selection_for(options, specs, agent_names)
    plan = build_plan(
        specs,
        pool=pool,
        environ=options.environ,
        selection=selection,
        registered=agent_names,
        shard=options.shard,
        durations=expected_seconds(store) if store is not None and options.shard else None,
        trials=options.trials,
        adaptive=options.adaptive,
        last_run=store.latest if store is not None and options.rescore_run is None else None,
        # Asking for the failed pairs again is asking for them to run: history must not answer instead.
        force=options.force or options.last_failed,
        changed=changed,
        unchanged=unchanged,
    )
    masker = masker or Masker()
    plan, rescored, rescored_run = rescores(plan, options, pool, masker)
    if notice is not None:
        for entry in plan:
            if entry.rescore is not None:
                run_id = entry.rescore.run_id
                what = f"{entry.key}: rescored from the recorded trials of run {run_id}, no agent started"
                notice(Notice("info", what))
    nothing_to_rerun = None
    if selection.only_keys is not None and not selection.only_keys:
        # only_reason reads "did not fail in the latest run (<id>)".
        latest = selection.only_reason.replace("did not fail", "no pair failed")
        nothing_to_rerun = f"--last-failed: {latest}; nothing was run, and that run stays the latest"
    runnable = [entry for entry in plan if entry.action == "run" and entry.rescore is None]
    recent = recent_lines(store, runnable) if store is not None else {}
    expected = forecast(runnable, recent, concurrency=options.concurrency)
    controls, known_controls = plan_controls(plan, pool, store, force=options.force)
    # Read before this run appends: the comparison is with what came before it.
    windows = base_history(store, runnable) if store is not None and not options.dry_run else {}
    return RunReport(
        plan=tuple(plan),
        masker=masker,
        dry_run=options.dry_run,
        history=store,
        base_lines={key: lines[-1] for key, lines in windows.items()},
        base_windows=windows,
        controls=tuple(controls),
        known_controls=known_controls,
        forecast=expected,
        over_budget=_over_budget(expected, options.budget_usd),
        nothing_to_rerun=nothing_to_rerun,
        rescored=rescored,
        rescored_run=rescored_run,
    )


def _over_budget(expected: Forecast, budget_usd: float | None) -> str | None:
    if budget_usd is None or not expected.pairs or expected.known_cost_usd <= budget_usd:
        return None
    lower = " at least" if expected.cost_usd is None else ""
    return (
        f"the forecast cost is{lower} ${expected.known_cost_usd:.2f}, above --budget-usd {budget_usd:g}: "
        "the budget may stop the run before every trial has started"
    )


def _execute(
    report: RunReport,
    options: RunOptions,
    pool: AgentPool,
    secret_values: dict[str, str],
    sink: ProgressSink,
    started: float,
) -> RunReport:
    run_id = new_run_id(started)
    staged: StagedFolder | None = None
    try:
        staged = begin_run(options, run_id)
        report = replace(report, run_id=run_id)
        report = _run_and_write(report, options, pool, secret_values, sink, started, staged.staging)
        folder, problem = finish_run(options, staged)
        durability = None
        if problem is not None:
            durability = (
                f"the disk reported an error while flushing {folder} ({problem}): its files "
                "read back whole now but may not survive a crash or power loss; copy them elsewhere"
            )
        return replace(
            report, run_folder=folder, suite_path=folder / "suite.json", durability_error=durability
        )
    except OSError as exc:
        where = staged.staging if staged is not None and staged.staging.exists() else options.owned_folder
        raise RunAbortedError(
            f"the run stopped on a file-system error: {exc}. Results already written are under {where}."
        ) from exc


def _run_and_write(
    report: RunReport,
    options: RunOptions,
    pool: AgentPool,
    secret_values: dict[str, str],
    sink: ProgressSink,
    started: float,
    results_dir: Path,
) -> RunReport:
    """Run the plan's trials (:func:`_run_trials`), then write ``suite.json`` and the manifest."""
    report = _run_trials(report, options, pool, secret_values, sink, results_dir)
    finished = time.time()
    commit = options.environ.get("GITHUB_SHA") or head_commit(options.repo)
    suite = build_suite(
        report.plan,
        report.results,
        started_at=started,
        finished_at=finished,
        git_commit=commit,
        ci_run_url=ci_run_url(options),
    )
    # Built from trials masked as they finished: masking the document again could only touch trialbook's
    # own vocabulary (a secret "pass" would turn the outcome "passed" into "***ed").
    publish_json(results_dir / "suite.json", suite_to_json(suite))
    assert report.run_id is not None
    lines = tuple(pending_lines(report.results, report.masker, options))
    manifest = build_manifest(
        report.plan,
        report.results,
        options,
        run_id=report.run_id,
        started_at=started,
        finished_at=finished,
        git_commit=commit,
        history_lines=[line.to_json() for line in lines],
        base_lines=report.base_lines,
    )
    if report.rescored_run is not None:
        manifest["rescored_from"] = report.rescored_run
    write_json(results_dir / MANIFEST, manifest, report.masker)
    masked = report.masker.json(manifest)
    return replace(report, suite=suite, history_lines=lines, manifest=masked)  # type: ignore[arg-type]


def _run_trials(
    report: RunReport,
    options: RunOptions,
    pool: AgentPool,
    secret_values: dict[str, str],
    sink: ProgressSink,
    results_dir: Path,
) -> RunReport:
    """The report with every pair's result: trials run, re-scored ones written, compared pairs judged."""
    cancel = current_cancellation()
    rescored = {
        key: write_rescored(found, results_dir, report.masker) for key, found in report.rescored.items()
    }
    settings = RunSettings(
        pool=pool,
        secret_values=secret_values,
        masker=report.masker,
        results_dir=results_dir,
        concurrency=options.concurrency,
        sink=sink,
        keep_sandboxes=options.keep_sandboxes,
        cancel=cancel,
    )
    fresh = [entry for entry in report.plan if entry.rescore is None]
    problems = list(report.warnings)  # sandboxes the run could not remove are added as it goes
    ran = run_blocking(
        run_plan(
            fresh, settings, budget_usd=options.budget_usd, controls=list(report.controls), problems=problems
        )
    )
    ledger = ran.ledger
    for found in rescored.values():
        if found.outcomes and uses_judges(found.entry.spec.assertions):
            # Re-scored pairs start no agent, but judges asked anew cost money now: it counts too.
            ledger.record(f"{found.entry.key} judges", found.judge_cost_usd, judges=True)
    by_key = {result.entry.key: result for result in ran.results} | rescored
    results = [by_key[entry.key] for entry in report.plan if entry.key in by_key]
    if cancel is None or not cancel.requested:  # a stopped run asks no more judges
        # After every trial: both arms of each compared pair have finished, so their judges can compare them.
        judge_pairs(
            report.plan, results, masker=report.masker, secret_values=secret_values,
            environ=options.environ, ledger=ledger, results_dir=results_dir,
        )  # fmt: skip
    apply_controls(results, ran.controls, report.known_controls)
    return replace(
        report,
        results=tuple(results),
        ledger=ledger,
        cancelled_by=cancel.signum if cancel is not None else None,
        warnings=tuple(problems),
    )


def rescores(
    plan: list[PlanEntry], options: RunOptions, pool: AgentPool, masker: Masker
) -> tuple[list[PlanEntry], dict[str, EntryResult], str | None]:
    """Re-check what a kept run's recorded trials can answer (see ``_rescore.plan_rescores``).

    ``trialbook rescore`` names the run; otherwise the cache looks in the results folder and the kept
    runs, newest first, for trials that differ only in their assertions (never with ``--force``).
    ``judge`` checks ask their judges again, through one client whose cache the recorded answers fill.
    """
    from ._judges import RunJudges

    judges = None
    if any(uses_judges(entry.spec.assertions) for entry in plan):
        names = {name for entry in plan for name in entry.spec.secrets}
        values = {name: options.environ[name] for name in names if name in options.environ}
        judges = RunJudges(masker, values, options.environ)
    if options.rescore_run is not None:
        from ._manifest import read_manifest

        manifest = read_manifest(options.rescore_run)
        run_id = str(manifest.get("run_id"))
        listed = manifest.get("pairs")
        pairs = listed if isinstance(listed, list) else []
        in_run = frozenset(
            (str(p.get("id")), str(p.get("agent")))
            for p in pairs
            if isinstance(p, dict) and p.get("action") == "run"
        )
        sources = recorded_sources([options.rescore_run])
        found, done = plan_rescores(plan, sources, pool.get, masker, explicit=(run_id, in_run), judges=judges)
        return found, done, run_id
    if options.force or options.last_failed:  # asked to run: recorded trials must not answer instead
        return plan, {}, None
    folders = [*options.rescore_from, *([options.results_dir] if options.results_dir is not None else [])]
    folders += list(reversed(run_folders(options.runs_dir)))
    sources = recorded_sources(folder for folder in folders if folder.is_dir())
    found, done = plan_rescores(plan, sources, pool.get, masker, judges=judges) if sources else (plan, {})
    return found, done, None
