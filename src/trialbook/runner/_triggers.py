"""The trigger evals of a run, scored from its plan and results (pure).

Each query of a trigger eval is an ordinary plan entry, so running, caching, history and budgets need
nothing special; only here are a group's queries put together into one confusion table per agent. A
query that was cached contributes the counts its history line kept under ``extra.trigger``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from ..evidence import JsonObject, JsonValue
from ..scoring.stats import fisher_two_sided
from ..triggers import QueryCounts, Rate, TriggerScore, score
from ._engine import EntryResult
from ._plan import PlanEntry

__all__ = ["BaseTriggers", "TriggerGroup", "trigger_extra", "trigger_groups"]

GroupVerdict = Literal["pass", "fail", "error", "incomplete"]


def _p(before: Rate, after: Rate) -> float:
    """Two-sided Fisher exact p that the two rates differ (1 when either has no trials)."""
    return float(fisher_two_sided(before.hits, before.total, after.hits, after.total))


@dataclass(frozen=True, slots=True)
class BaseTriggers:
    """The same queries as the base branch last recorded them, and what changed since."""

    queries: tuple[QueryCounts, ...]
    head: tuple[QueryCounts, ...]

    @property
    def score(self) -> TriggerScore:
        """The base branch's table over the queries it has lines for."""
        return score(self.queries)

    def flipped(self) -> list[tuple[QueryCounts, QueryCounts]]:
        """``(base, head)`` of each query whose majority changed: used most of the time on one side only."""
        base = {q.query_id: q for q in self.queries}
        found = []
        for now in self.head:
            before = base.get(now.query_id)
            if before is None or before.rate is None or now.rate is None:
                continue
            if (before.rate >= 0.5) != (now.rate >= 0.5):
                found.append((before, now))
        return found

    def lost(self) -> list[str]:
        """Query ids that went from doing what their label says to not doing it."""
        return [now.query_id for before, now in self.flipped() if before.agreed * 2 >= before.known]

    def to_json(self, head: TriggerScore) -> JsonObject:
        """The base table, the exact tests of recall and precision against ``head``, and the flips."""
        base = self.score
        lost = set(self.lost())
        return {
            "score": base.to_json(),
            "recall_p": _p(base.recall, head.recall),
            "precision_p": _p(base.precision, head.precision),
            "flipped": [
                {
                    "id": now.query_id,
                    "expect": now.expect,
                    "base_rate": before.rate,
                    "rate": now.rate,
                    "lost": now.query_id in lost,
                }
                for before, now in self.flipped()
            ],
        }


@dataclass(frozen=True, slots=True)
class TriggerGroup:
    """One trigger eval × agent: its queries' counts, their score, the thresholds and the verdict."""

    eval_id: str
    agent: str
    skill: str
    queries: tuple[QueryCounts, ...]
    missing: tuple[str, ...]
    """Query ids with no counts in this run: filtered out, or neither run nor cached."""
    min_recall: float | None
    min_precision: float | None
    base: BaseTriggers | None = None
    """The base branch's record of the same queries, when history has one (pull request runs)."""

    @property
    def score(self) -> TriggerScore:
        """The confusion table over every query."""
        return score(self.queries)

    @property
    def holdout(self) -> TriggerScore | None:
        """The table over the ``holdout`` queries alone, when the set marks any."""
        return score(self.queries, "holdout") if any(q.split == "holdout" for q in self.queries) else None

    def problems(self) -> list[str]:
        """Why the group does not pass: a rate below its threshold, or a rate that cannot be known."""
        found = []
        result = self.score
        for name, rate, least in (
            ("recall", result.recall, self.min_recall),
            ("precision", result.precision, self.min_precision),
        ):
            if least is None:
                continue
            if rate.value is None:
                found.append(f"{name} is unknown ({rate.hits}/{rate.total}), min_{name} {least:g}")
            elif rate.value < least:
                found.append(f"{name} {rate.value:.2f} ({rate.hits}/{rate.total}) < min_{name} {least:g}")
        return found

    @property
    def verdict(self) -> GroupVerdict:
        """``incomplete``: queries missing; ``error``: no trial could tell; else the thresholds decide."""
        if self.missing:
            return "incomplete"
        result = self.score
        if result.unknown and not (result.tp + result.fn + result.fp + result.tn):
            return "error"
        return "fail" if self.problems() else "pass"

    def text(self) -> str:
        """``recall 0.83 (5/6) · precision 1.00 (5/5) · F1 0.91 · pass``, for the terminal."""
        from ..report.triggers import describe

        return describe(self.to_json())

    def to_json(self) -> JsonObject:
        """The group as ``suite.json`` and the manifest keep it."""
        holdout = self.holdout
        return {
            "eval": self.eval_id,
            "agent": self.agent,
            "skill": self.skill,
            "verdict": self.verdict,
            "min_recall": self.min_recall,
            "min_precision": self.min_precision,
            "score": self.score.to_json(),
            "holdout": holdout.to_json() if holdout is not None else None,
            "queries": [
                {
                    "id": q.query_id,
                    "expect": q.expect,
                    "split": q.split,
                    "triggered": q.triggered,
                    "not_triggered": q.not_triggered,
                    "unknown": q.unknown,
                    "rate": q.rate,
                }
                for q in self.queries
            ],
            "missing": list(self.missing),
            "problems": list[JsonValue](self.problems()),
            "base": self.base.to_json(self.score) if self.base is not None else None,
        }


def _states(result: EntryResult, skill: str) -> tuple[int, int, int]:
    from ..assertions import trigger_state  # only runs with trigger evals need the check's module

    triggered = not_triggered = unknown = 0
    for outcome in result.outcomes:
        state, _ = trigger_state(outcome.result, skill)
        if state is None:
            unknown += 1
        elif state:
            triggered += 1
        else:
            not_triggered += 1
    return triggered, not_triggered, unknown


def trigger_extra(result: EntryResult) -> dict[str, object]:
    """What a query's history line adds under ``extra.trigger``, so a cached query still counts."""
    of = result.entry.spec.trigger
    if of is None:
        return {}
    triggered, not_triggered, unknown = _states(result, of.skill)
    return {
        "trigger": {
            "group": of.group, "query": of.query_id, "expect": of.expect, "split": of.split,
            "triggered": triggered, "not_triggered": not_triggered, "unknown": unknown,
        }
    }  # fmt: skip


def _recorded(line: object) -> tuple[int, int, int] | None:
    """The ``extra.trigger`` counts a history line kept, or ``None`` (not a query's line, or edited)."""
    extra = getattr(line, "extra", None)
    found = extra.get("trigger") if isinstance(extra, Mapping) else None
    if not isinstance(found, Mapping):
        return None
    counts = tuple(found.get(key) for key in ("triggered", "not_triggered", "unknown"))
    if all(isinstance(count, int) and count >= 0 for count in counts):
        return counts  # type: ignore[return-value]
    return None


def trigger_groups(
    plan: Sequence[PlanEntry], results: Sequence[EntryResult], base_lines: Mapping[str, object] | None = None
) -> list[TriggerGroup]:
    """Every trigger eval × agent of the plan, in plan order, scored over the queries with counts.

    ``base_lines`` (plan key → the base branch's newest history line) adds each group's base record.
    """
    by_key = {result.entry.key: result for result in results}
    groups: dict[tuple[str, str], list[PlanEntry]] = {}
    for entry in plan:
        if entry.spec.trigger is not None and not entry.control:
            groups.setdefault((entry.spec.trigger.group, entry.label), []).append(entry)
    found = []
    for (group, label), entries in groups.items():
        of = entries[0].spec.trigger
        assert of is not None
        queries: list[QueryCounts] = []
        base: list[QueryCounts] = []
        missing: list[str] = []
        for entry in entries:
            query = entry.spec.trigger
            assert query is not None
            result = by_key.get(entry.key)
            counts = (
                _states(result, of.skill)
                if result is not None and result.outcomes
                else _recorded(entry.last)
                if entry.action == "cached"
                else None
            )
            before = _recorded(base_lines.get(entry.key)) if base_lines else None
            if before is not None:
                base.append(QueryCounts(query.query_id, query.expect, *before, split=query.split))  # type: ignore[arg-type]
            if counts is None:
                missing.append(query.query_id)
                continue
            queries.append(QueryCounts(query.query_id, query.expect, *counts, split=query.split))  # type: ignore[arg-type]
        compared = BaseTriggers(tuple(base), tuple(queries)) if base else None
        thresholds = (of.min_recall, of.min_precision)
        found.append(
            TriggerGroup(group, label, of.skill, tuple(queries), tuple(missing), *thresholds, compared)
        )
    return found
