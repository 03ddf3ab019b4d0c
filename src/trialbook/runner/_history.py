"""The runner's side of history: lines from a finished run, and keeping them in the shared store.

One line per eval × agent that ran. The store is synced before planning and appended (and pushed)
after the run; history trouble never fails the trials themselves: a failed sync only makes cache
decisions less informed, and a failed append or push is kept on the report for the front end to show.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, cast

from .. import __version__
from ..history import HistoryError, HistoryLine, HistoryStore, Verdict, format_started_at, parse_started_at
from ..scoring.flaky import WINDOW
from ..select import head_commit
from ._arms import arm_extra
from ._engine import EntryResult
from ._explain import fit
from ._judges import uses_judges
from ._options import RunOptions
from ._plan import PlanEntry
from ._triggers import trigger_extra

if TYPE_CHECKING:
    from ..masking import Masker
    from ._run import RunReport

__all__ = [
    "SUMMARY_ENTRIES",
    "SUMMARY_LINES",
    "SUMMARY_LINE_CHARS",
    "base_history",
    "base_results",
    "cached_failures",
    "ci_run_url",
    "expected_seconds",
    "failure_summary",
    "history_lines",
    "is_pull_request_line",
    "pending_lines",
    "recent_lines",
    "record",
    "sync",
]

SUMMARY_ENTRIES = 5
"""Failure entries (an agent error, a failed check) a history line keeps; the transcripts keep all."""
SUMMARY_LINES = 3
"""Lines kept of each entry: its headline and the first lines of its evidence."""
SUMMARY_LINE_CHARS = 160
"""Characters kept of each line, the cut marked with ``…``."""


def is_pull_request_line(line: HistoryLine) -> bool:
    """Whether a line was recorded by a pull request run (whose code was not merged)."""
    return str(line.extra.get("ref", "")).startswith("refs/pull/")


def recent_lines(
    store: HistoryStore, plan: Sequence[PlanEntry], *, last_n: int = WINDOW, base_only: bool = False
) -> dict[str, list[HistoryLine]]:
    """The last ``last_n`` lines of each planned eval × agent, oldest first, by plan key.

    With ``base_only``, lines recorded by pull requests are left out.
    """
    found: dict[str, list[HistoryLine]] = {}
    by_id: dict[str, list[HistoryLine]] = {}
    for entry in plan:
        lines = by_id.setdefault(entry.spec.id, store.read(entry.spec.id))
        candidates = [
            line
            for line in lines
            if line.agent == entry.label and not (base_only and is_pull_request_line(line))
        ]
        if candidates:
            candidates.sort(key=lambda line: parse_started_at(line.started_at))
            found[entry.key] = candidates[-last_n:]
    return found


def expected_seconds(store: HistoryStore) -> Callable[[PlanEntry], float | None]:
    """How long history expects a planned pair to take: median seconds per trial × trials planned.

    The median over the recent lines of any ref (a pull request's run takes as long as the base's);
    ``None`` when no line of the pair records a duration. Shards use it to balance their work.
    """
    by_id: dict[str, list[HistoryLine]] = {}

    def seconds(entry: PlanEntry) -> float | None:
        lines = by_id.setdefault(entry.spec.id, store.read(entry.spec.id))
        known = sorted(
            (line for line in lines if line.agent == entry.label and line.trials > 0),
            key=lambda line: parse_started_at(line.started_at),
        )[-WINDOW:]
        per_trial = [line.duration_s / line.trials for line in known if line.duration_s is not None]
        if not per_trial:
            return None
        import statistics  # only history with durations needs it

        return statistics.median(per_trial) * entry.spec.trials

    return seconds


def base_history(
    store: HistoryStore, plan: Sequence[PlanEntry], *, last_n: int = WINDOW
) -> dict[str, list[HistoryLine]]:
    """The last ``last_n`` lines of each planned eval × agent recorded outside pull requests, oldest first.

    That is the base branch's record a reviewer compares with: lines from other PRs describe code that
    was never merged.
    """
    return recent_lines(store, plan, last_n=last_n, base_only=True)


def base_results(store: HistoryStore, plan: Sequence[PlanEntry]) -> dict[str, HistoryLine]:
    """The newest base-branch line of each planned eval × agent, by plan key (see :func:`base_history`)."""
    return {key: lines[-1] for key, lines in base_history(store, plan, last_n=1).items()}


def failure_summary(failures: Sequence[str], mask: Callable[[str], str]) -> dict[str, object]:
    """``extra`` fields that keep why a run failed, short enough for every history line.

    A cached failure is reported from its line alone, so the line must say why it failed. Each entry is
    masked whole before anything is cut: a cut never leaves half a secret for the masker to miss.
    """
    kept: list[str] = []
    for failure in failures[:SUMMARY_ENTRIES]:
        lines = mask(failure).splitlines()[:SUMMARY_LINES]
        kept.append("\n".join(fit(line, SUMMARY_LINE_CHARS) for line in lines if line.strip()))
    summary: dict[str, object] = {"failures": [text for text in kept if text]} if kept else {}
    if len(failures) > SUMMARY_ENTRIES:
        summary["failures_omitted"] = len(failures) - SUMMARY_ENTRIES
    return summary


def cached_failures(line: object) -> tuple[str, ...]:
    """The failure summary a history line carries (see :func:`failure_summary`), for a cached report.

    Lines may be hand-edited: anything but a list of strings is ignored rather than shown.
    """
    extra = getattr(line, "extra", None)
    if not isinstance(extra, Mapping):
        return ()
    found = extra.get("failures")
    if not isinstance(found, list) or not all(isinstance(item, str) for item in found):
        return ()
    omitted = extra.get("failures_omitted")
    more = [f"… {omitted} more in that run's transcripts"] if isinstance(omitted, int) and omitted > 0 else []
    return (*found, *more)


def history_lines(
    results: Sequence[EntryResult],
    *,
    commit: str | None,
    ci_run: str | None,
    context: Mapping[str, str] | None = None,
    mask: Callable[[str], str] = str,
) -> list[HistoryLine]:
    """A line per eval × agent with at least one finished trial.

    Entries the budget stopped before any trial leave no line: they have no evidence to keep. A line
    that did not pass carries a short failure summary, masked with ``mask``.
    """
    lines: list[HistoryLine] = []
    for result in results:
        if not result.outcomes:
            continue
        entry = result.entry
        assert entry.cache_key is not None
        assert entry.prompt_sha256 is not None
        ran = len(result.outcomes)
        lines.append(
            HistoryLine(
                id=entry.spec.id,
                agent=entry.label,
                agent_version=entry.agent_version,
                model=entry.model,
                prompt_sha256=entry.prompt_sha256,
                cache_key=entry.cache_key,
                trials=ran,
                passed=result.passed,
                pass_rate=result.passed / ran,
                threshold=entry.spec.pass_rate,
                # A vacuous control is a failure to history (cached, and failing the run, like one); an
                # uncalibrated judge panel an error (never cached: the next run asks the panel again).
                verdict=_history_verdict(result.verdict),
                cost_usd=result.cost_usd,
                duration_s=round(result.duration_s, 3),
                started_at=format_started_at(datetime.fromtimestamp(result.started_at, UTC)),
                commit=commit,
                trialbook_version=__version__,
                ci_run=ci_run,
                extra=_extra(result, context or {}, mask),
            )
        )
    return lines


def _history_verdict(verdict: str) -> Verdict:
    if verdict == "vacuous":
        return "fail"
    if verdict == "judge_uncalibrated":
        return "error"
    assert verdict in ("pass", "fail", "error", "incomplete")
    return cast(Verdict, verdict)


def _extra(result: EntryResult, context: Mapping[str, str], mask: Callable[[str], str]) -> dict[str, object]:
    extra: dict[str, object] = dict(context) | arm_extra(result) | trigger_extra(result)
    if result.verdict != "pass":
        extra.update(failure_summary(result.failures, mask))
    if result.rescored_from is not None:
        extra["rescored_from"] = result.rescored_from
    if result.verdict == "judge_uncalibrated":
        extra["judge_uncalibrated"] = True
    if uses_judges(result.entry.spec.assertions):
        extra["judge_cost_usd"] = result.judge_cost_usd
    if result.unstarted:
        extra["unstarted_trials"] = result.unstarted
    if result.saved:
        extra["saved_trials"] = result.saved
    if result.control is not None:
        extra["control_key"] = result.control.key
        extra["vacuous"] = result.control.vacuous
        if result.control.held:
            extra["held"] = list(result.control.held)
    return extra


def sync(store: HistoryStore) -> str | None:
    """Bring in the shared history before planning; what went wrong, for the front end to say, or None.

    Planning with the local history is still right, only less informed, so a failure here does not stop
    the run; the push after the run tries again and reports.
    """
    try:
        store.sync()
    except HistoryError as exc:
        return str(exc)
    return None


def pending_lines(results: Sequence[EntryResult], masker: Masker, options: RunOptions) -> list[HistoryLine]:
    """The history lines this run records: one per eval × agent with a finished trial."""
    return history_lines(
        results,
        commit=options.environ.get("GITHUB_SHA") or head_commit(options.repo),
        ci_run=ci_run_url(options),
        context={
            key: value
            for key, value in (
                ("ref", options.environ.get("GITHUB_REF", "")),
                ("event", options.environ.get("GITHUB_EVENT_NAME", "")),
            )
            if value
        },
        mask=masker.text,
    )


def record(report: RunReport, store: HistoryStore, options: RunOptions) -> RunReport:
    """Append a line per finished eval × agent (and push when asked); the report with what failed."""
    # The lines already written into the run folder's manifest, when there is one: the same run ids.
    lines = report.history_lines
    if lines is None:
        lines = tuple(pending_lines(report.results, report.masker, options))
    error = None
    try:
        if lines:
            store.append(list(lines))
        if options.push:
            store.sync()
    except HistoryError as exc:
        error = str(exc)
    return replace(report, history_error=error, history_problems=tuple(store.problems))


def ci_run_url(options: RunOptions) -> str | None:
    """The GitHub Actions run page this run belongs to, when the environment names one."""
    env = options.environ
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    return None
