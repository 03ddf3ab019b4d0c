"""What a run looks like to a reader: rows for the terminal table, the job summary and the PR comment."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..report import BaseResult, ListedEval, ReviewRow, cached_note
from ..report.isolation import isolation_label, outside_lines
from ..report.terminal import TableRow
from ..scoring.flaky import Stability, stability
from ..scoring.verdict import EXECUTION_FAILURES
from ._arms import comparisons
from ._engine import EntryResult
from ._history import cached_failures
from ._judges import uses_judges
from ._plan import PlanEntry
from ._rescore import NOT_RESCORABLE
from ._run import RunReport
from ._triggers import trigger_groups
from ._versions import version_drift

if TYPE_CHECKING:
    from ..report.suite_view import Review

__all__ = [
    "BaseLookup",
    "entry_remarks",
    "review_of",
    "table_rows",
    "terminal_note",
]

BaseLookup = Callable[[str, str], BaseResult | None]


def _history(report: RunReport, key: str) -> Stability | None:
    window = report.base_windows.get(key)
    return stability(window) if window else None


def _row(report: RunReport, result: EntryResult, base: BaseLookup | None) -> ReviewRow:
    entry = result.entry
    return ReviewRow(
        eval_id=entry.spec.id,
        agent=entry.label,
        passed=result.passed,
        trials=len(result.outcomes),
        verdict=result.verdict,
        base=base(entry.spec.id, entry.label) if base else None,
        # Re-checked trials cost nothing now; the note says what their agent run cost.
        cost_usd=0.0 if result.rescored_from is not None else result.cost_usd,
        duration_s=result.duration_s,
        failures=tuple(result.failures),
        history=_history(report, entry.key),
        note="; ".join(result.notes),
        remarks=tuple(entry_remarks(result)),
        judged=uses_judges(entry.spec.assertions),
        judge_cost_usd=result.judge_cost_usd,
        # Re-checked trials ran in an earlier run, under whatever isolation that run had.
        isolation=None
        if result.rescored_from is not None
        else isolation_label(entry.isolation, entry.network),
        outside=outside_lines([(o.request.trial, o.result) for o in result.outcomes]),
    )


def _cached_row(entry: PlanEntry, line: object, base: BaseLookup | None) -> ReviewRow:
    """A cached pair as a row: the recorded run's counts, verdict and failure summary, costing nothing now."""
    extra = getattr(line, "extra", None)
    vacuous = isinstance(extra, dict) and extra.get("vacuous") is True
    verdict = str(getattr(line, "verdict", "?"))
    return ReviewRow(
        eval_id=entry.spec.id,
        agent=entry.label,
        passed=int(getattr(line, "passed", 0)),
        trials=int(getattr(line, "trials", 0)),
        verdict="vacuous" if vacuous and verdict == "fail" else verdict,
        base=base(entry.spec.id, entry.label) if base else None,
        cost_usd=0.0,
        duration_s=None,
        failures=cached_failures(line),
        note=cached_note(
            getattr(line, "started_at", None),
            getattr(line, "commit", None),
            extra.get("ref") if isinstance(extra, dict) else None,
        ),
        cached=True,
    )


def terminal_note(row: ReviewRow) -> str:
    """The table's note: the row's own note, then how it compares with the flaky eval's base window."""
    parts = [row.note] if row.note else []
    history, test = row.history, row.regression
    if history is not None and row.compared_with_window and test is not None and row.verdict != "pass":
        usual = f"{history.passed}/{history.trials} over {history.runs} base runs"
        parts.append(
            f"within the usual range of a flaky eval ({usual}, p={test.p_value:.2f})"
            if not test.regressed
            else f"regressed against a flaky eval's {usual} (p={test.p_value:.3f})"
        )
    return "; ".join(parts)


def review_of(report: RunReport, base: BaseLookup | None = None) -> Review:
    """Rows for every eval × agent that ran, and listings for the rest, with their reasons."""
    from ..report.suite_view import Review  # the summary's and comment's view; the terminal table needs none

    rows: list[ReviewRow] = []
    unstarted: list[ListedEval] = []
    for result in report.results:
        entry = result.entry
        # A without arm is not judged: it shows in the comparison, not as a row of its own.
        if result.outcomes and entry.arm != "without":
            rows.append(_row(report, result, base))
        if result.unstarted:
            unstarted.append(
                ListedEval(
                    eval_id=entry.spec.id,
                    agent=entry.label,
                    reason=f"{result.unstarted} of {result.planned} trials not started: the budget was spent",
                )
            )
        if result.cancelled:
            unstarted.append(
                ListedEval(
                    eval_id=entry.spec.id,
                    agent=entry.label,
                    reason=f"{result.cancelled} of {result.planned} trials not finished: run cancelled",
                )
            )
    cached = [
        ListedEval(eval_id=e.spec.id, agent=e.label, reason=e.reason)
        for e in report.plan
        if e.action == "cached"
    ]
    rows += [
        _cached_row(e, e.last, base)
        for e in report.plan
        if e.action == "cached" and e.last is not None and e.arm != "without"
    ]
    skipped = [
        ListedEval(eval_id=e.spec.id, agent=e.label, reason=e.reason)
        for e in report.plan
        if e.action in ("filtered", "unchanged")
    ]
    groups = trigger_groups(report.plan, report.results, report.base_lines)
    return Review(
        rows, cached, skipped, unstarted, comparisons(report.plan, report.results),
        [group.to_json() for group in groups],
        [drift.to_json() for drift in version_drift(report.plan, report.results)],
    )  # fmt: skip


def entry_remarks(result: EntryResult) -> list[str]:
    """Notes for one eval × agent: today, the declared shims that no trial called."""
    count = len(result.outcomes)
    if count and all(
        not o.result.success and o.result.stop_reason in EXECUTION_FAILURES for o in result.outcomes
    ):
        return []  # no agent ran, so no shim could be called: the note would explain nothing
    where = "its trial" if count == 1 else f"any of its {count} trials"
    return [
        f"shim {name} was declared but not called in {where}: not needed, or reached without PATH "
        "(an absolute path, command -p, an activated virtualenv)"
        for name in result.unused_shims
    ]


def _arm_note(entry: PlanEntry, note: str) -> str:
    """A without arm's verdict is shown, and said not to count (docs/instructions.md)."""
    if entry.arm != "without":
        return note
    return "; ".join(part for part in ("without arm: not judged, see the comparison below", note) if part)


def table_rows(report: RunReport) -> list[TableRow]:
    """The terminal table: every eval × agent in plan order, including cached and skipped ones."""
    by_key = {result.entry.key: result for result in report.results}
    rows: list[TableRow] = []
    for entry in report.plan:
        result = by_key.get(entry.key)
        if result is not None:
            rows.append(
                TableRow(
                    eval_id=entry.spec.id,
                    agent=entry.label,
                    passed=result.passed,
                    trials=len(result.outcomes) + result.unstarted + result.cancelled,
                    verdict=result.verdict,
                    cost_usd=result.cost_usd,
                    duration_s=result.duration_s,
                    cost_estimated=result.cost_estimated,
                    note=_arm_note(entry, terminal_note(_row(report, result, None))),
                    judged=uses_judges(entry.spec.assertions),
                    judge_cost_usd=result.judge_cost_usd,
                )
            )
        else:
            verdict: str = entry.action
            last = entry.last
            if entry.action == "cached" and last is not None:
                vacuous = (getattr(last, "extra", None) or {}).get("vacuous") is True
                verdict = f"cached ({'vacuous' if vacuous else getattr(last, 'verdict', '?')})"
            elif entry.reason.startswith(NOT_RESCORABLE):
                verdict = NOT_RESCORABLE
            rows.append(TableRow(entry.spec.id, entry.label, None, None, verdict, None, None))
    return rows
