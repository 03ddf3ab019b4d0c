"""Pairwise judging of compared arms: once both arms of a pair finished, its judges compare them.

A ``judge`` check with ``pairwise: true`` in a ``compare:`` eval grades each trial on its own like any
judge check; in addition, each trial kept what the check shows (masked and bounded, in its evidence).
Here, for every trial index both arms finished, each judge of the check is shown the ``with`` arm's
material and the ``without`` arm's, in both orders, and asked which better meets the rubric. The pure
rule (:func:`trialbook.assertions.pairwise`) makes a preference that flips with the order a tie and an
unusable answer an error; the counts are reported beside the comparison, never deciding the eval.

Every request is kept in ``pairwise.json`` beside the ``with`` arm's trials, and its cost counts as judge
cost in the run's ledger (and so against ``--budget-usd``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..assertions import Judge, pairwise, tally_pairwise
from ..evidence import JsonObject, JsonValue
from ..masking import Masker
from ._engine import EntryResult
from ._judges import RunJudges, judge_call_json, judge_cost
from ._outputs import write_json
from ._plan import WITHOUT_SUFFIX, PlanEntry

if TYPE_CHECKING:
    from ..agents.judge_client import JudgeCall
    from ._ledger import BudgetLedger
    from ._trial import TrialOutcome

__all__ = ["PAIRWISE_FILE", "judge_pairs", "pairwise_checks"]

PAIRWISE_FILE = "pairwise.json"
"""Where the ``with`` arm's folder keeps every pairwise request and decision."""


def pairwise_checks(entry: PlanEntry) -> tuple[tuple[int, Judge], ...]:
    """The eval's ``pairwise`` judge checks with their index among its assertions."""
    return tuple(
        (index, assertion)
        for index, assertion in enumerate(entry.spec.assertions)
        if isinstance(assertion, Judge) and assertion.pairwise
    )


def _shown(outcomes: Sequence[TrialOutcome]) -> dict[int, dict[int, str]]:
    """Trial number → check index → the material that trial kept for its pairwise checks."""
    return {outcome.request.trial: dict(outcome.pairwise_shown) for outcome in outcomes}


@dataclass
class _Asked:
    """One pair's decisions as they are made: the pure decisions, the calls, and their record."""

    decisions: list[Literal["pass", "fail", "tie"] | None]
    calls: list[JudgeCall]
    records: list[JsonValue]


def _call_json(call: JudgeCall, first: str) -> JsonObject:
    """A pairwise request as ``judge_calls`` keep one, saying which arm came first and which it preferred.

    ``better`` (``first``, ``second``, ``null`` for an error) stands in place of ``verdict``: a pass
    or fail would misread as a verdict on a trial.
    """
    found = judge_call_json(call)
    verdict = found.pop("verdict")
    better = {"pass": "first", "fail": "second"}.get(verdict) if isinstance(verdict, str) else None
    return {**found, "first_shown": first, "better": better}


def _ask(judges: RunJudges, check: Judge, with_text: str, without_text: str, asked: _Asked) -> None:
    """Each judge of ``check`` on both orders; the ``with`` arm is the first response of the first."""
    for judge in check.judges:
        model = judges.model(judge)
        first = judges.client.ask_pair(model, check.rubric, with_text, without_text)
        swapped = judges.client.ask_pair(model, check.rubric, without_text, with_text)
        decision = pairwise(first.parsed, swapped.parsed)
        asked.decisions.append(decision)
        asked.calls += [first, swapped]
        preferred = {"pass": "with", "fail": "without", "tie": "tie", None: None}[decision]
        asked.records.append(
            {
                "judge": judge.name,
                "preferred": preferred,
                "error": "; ".join(c.parsed.error for c in (first, swapped) if c.parsed.error) or None,
                "calls": [_call_json(first, "with"), _call_json(swapped, "without")],
            }
        )


def _judge_pair(
    entry: PlanEntry, with_result: EntryResult, without_result: EntryResult, judges: RunJudges
) -> _Asked:
    """Every decision of one pair: per trial number both arms finished, per pairwise check, per judge."""
    with_shown, without_shown = _shown(with_result.outcomes), _shown(without_result.outcomes)
    asked = _Asked([], [], [])
    for trial in sorted(set(with_shown) & set(without_shown)):
        for index, check in pairwise_checks(entry):
            with_text, without_text = with_shown[trial].get(index), without_shown[trial].get(index)
            if with_text is None or without_text is None:
                continue  # a trial whose checks stopped before the material was kept
            start = len(asked.records)
            _ask(judges, check, with_text, without_text, asked)
            for record in asked.records[start:]:
                if isinstance(record, dict):
                    record.update({"trial": trial, "check": index})
    return asked


def _pairs(
    plan: Sequence[PlanEntry], results: Sequence[EntryResult]
) -> list[tuple[PlanEntry, EntryResult, EntryResult]]:
    """The compared pairs with pairwise checks whose two arms both have finished trials in this run."""
    by_key = {result.entry.key: result for result in results}
    found = []
    for entry in plan:
        if entry.arm != "with" or entry.spec.compare is None or not pairwise_checks(entry):
            continue
        with_result, without_result = by_key.get(entry.key), by_key.get(entry.key + WITHOUT_SUFFIX)
        if with_result is None or without_result is None:
            continue
        if with_result.outcomes and without_result.outcomes:
            found.append((entry, with_result, without_result))
    return found


def judge_pairs(
    plan: Sequence[PlanEntry],
    results: Sequence[EntryResult],
    *,
    masker: Masker,
    secret_values: Mapping[str, str],
    environ: Mapping[str, str],
    ledger: BudgetLedger,
    results_dir: Path,
) -> None:
    """Have the pairwise judges compare every pair whose arms both ran; set each ``with`` result's counts.

    An arm served from the cache has no trials in this run, and a re-scored trial kept no material, so
    such a pair is not compared: its comparison's ``pairwise`` stays ``None`` (unknown, not zero). So
    are the pairs left once the run's budget is spent.
    """
    pairs = _pairs(plan, results)
    if not pairs:
        return
    from ..scoring.comparison import PairwiseJudged

    judges = RunJudges(masker, secret_values, environ)
    for entry, with_result, without_result in pairs:
        if ledger.exhausted:
            break  # the budget is spent: no more judges are asked (the pairs left stay not compared)
        asked = _judge_pair(entry, with_result, without_result, judges)
        if not asked.records:
            continue  # no trial kept material (re-scored trials, say): unknown, not zero preferences
        tally = tally_pairwise(asked.decisions)
        cost = judge_cost(asked.calls)
        with_result.pairwise = PairwiseJudged(
            tally.with_preferred, tally.without_preferred, tally.ties, tally.errors, len(asked.calls), cost
        )
        if asked.calls:
            ledger.record(f"{entry.key} pairwise judges", cost, judges=True)
        document: JsonObject = {"without": without_result.entry.label, "decisions": asked.records}
        folder = results_dir / "evals" / entry.spec.id / entry.label
        write_json(folder / PAIRWISE_FILE, document, masker)
