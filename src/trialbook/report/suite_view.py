"""Review rows from a saved suite report, so ``trialbook report`` shows what the run showed (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..evidence import JsonObject, JsonValue, SuiteReport
from ..scoring.comparison import ComparedPair, Comparison
from ._rows import ListedEval, ReviewRow, cached_note
from .isolation import outside_lines, sandbox_label

__all__ = ["Review", "review_from_suite"]


@dataclass
class Review:
    """A run split the way readers look at it: what ran, what was cached, skipped or left unstarted."""

    rows: list[ReviewRow] = field(default_factory=list)
    cached: list[ListedEval] = field(default_factory=list)
    skipped: list[ListedEval] = field(default_factory=list)
    unstarted: list[ListedEval] = field(default_factory=list)
    comparisons: list[ComparedPair] = field(default_factory=list)
    """With/without comparisons of ``compare:`` evals; their ``without`` arms have no row of their own."""
    triggers: list[JsonObject] = field(default_factory=list)
    """Trigger evals scored over their queries, as the run's manifest keeps them (``report.triggers``)."""
    versions: list[JsonObject] = field(default_factory=list)
    """One agent at two versions on the same evals, as the manifest keeps them (``report.versions``)."""


def _int(value: JsonValue) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: JsonValue) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _note(props: Mapping[str, JsonValue]) -> str:
    saved = _int(props.get("saved_trials", 0))
    if not saved:
        return ""
    planned = _int(props.get("planned_trials", 0))
    ran = _int(props.get("trials", 0))
    return f"decided after {ran} of {planned} trials, {saved} saved"


def _cached_row(
    eval_id: str, agent: str, verdict: str, props: Mapping[str, JsonValue], failures: tuple[str, ...]
) -> ReviewRow:
    """A cached test as the run showed it: the recorded run's counts, verdict and reasons (see runner)."""
    return ReviewRow(
        eval_id=eval_id,
        agent=agent,
        passed=_int(props.get("cached_passed", 0)),
        trials=_int(props.get("cached_trials", 0)),
        verdict="vacuous" if verdict == "fail" and props.get("cached_vacuous") is True else verdict,
        base=None,
        cost_usd=0.0,
        duration_s=None,
        failures=failures,
        note=cached_note(props.get("cached_started_at"), props.get("cached_commit"), props.get("cached_ref")),
        cached=True,
    )


def review_from_suite(suite: SuiteReport) -> Review:
    """Rebuild the review of an eval run from the properties trialbook saved on each test."""
    review = Review()
    for test in suite.tests:
        props = test.properties
        eval_id, _, agent = test.id.partition("::")
        reason = str(props.get("reason", ""))
        compared = props.get("comparison")
        comparison = Comparison.from_json(compared) if isinstance(compared, dict) else None
        if comparison is not None:
            review.comparisons.append(ComparedPair(eval_id, agent, comparison))
        if test.outcome == "cached":
            review.cached.append(ListedEval(eval_id=eval_id, agent=agent or None, reason=reason))
            verdict = props.get("cached_verdict")
            if isinstance(verdict, str) and props.get("arm") != "without":
                review.rows.append(_cached_row(eval_id, agent, verdict, props, test.assertion_errors))
            continue
        if test.outcome == "skipped":
            review.skipped.append(ListedEval(eval_id=eval_id, agent=agent or None, reason=reason))
            continue
        if props.get("arm") == "without":
            continue
        trials = _int(props.get("trials", len(test.executions)))
        review.rows.append(
            ReviewRow(
                eval_id=eval_id,
                agent=agent,
                passed=_int(props.get("passed", sum(1 for e in test.executions if e.passed))),
                trials=trials,
                verdict=str(props.get("verdict", test.outcome)),
                base=None,
                cost_usd=_float(props.get("cost_usd")),
                duration_s=test.duration_s,
                failures=test.assertion_errors,
                note=_note(props),
                judged="judge_cost_usd" in props,
                judge_cost_usd=_float(props.get("judge_cost_usd")),
                isolation=sandbox_label(props),
                outside=outside_lines([(e.trial or i, e.result) for i, e in enumerate(test.executions, 1)]),
            )
        )
        unstarted = _int(props.get("unstarted_trials", 0))
        if unstarted:
            planned = trials + unstarted
            review.unstarted.append(
                ListedEval(
                    eval_id=eval_id, agent=agent, reason=f"{unstarted} of {planned} trials not started"
                )
            )
    return review
