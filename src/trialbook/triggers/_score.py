"""Precision, recall, F1 and accuracy of a skill's triggering, from per-query counts (pure).

A trigger eval asks each query several times. Every trial is one observation: the agent used the skill
or it did not, or its evidence cannot tell (``unknown``, left out of every rate and reported apart).
A ``should`` query's trials are the positives, a ``should_not`` query's the negatives; rates are over
trials, so a query asked three times weighs three times. Each rate carries its Wilson 95 % interval,
and a rate with no trials under it is ``None``, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ..evidence import JsonObject
from ..scoring.stats import wilson_interval

__all__ = ["Expect", "QueryCounts", "Rate", "TriggerScore", "score"]

Expect = Literal["should", "should_not"]


@dataclass(frozen=True, slots=True)
class QueryCounts:
    """One query's trials: how many used the skill, how many did not, how many could not be told."""

    query_id: str
    expect: Expect
    triggered: int
    not_triggered: int
    unknown: int = 0
    split: str | None = None

    @property
    def known(self) -> int:
        """Trials whose evidence decided either way."""
        return self.triggered + self.not_triggered

    @property
    def rate(self) -> float | None:
        """The share of decided trials that used the skill; ``None`` when none decided."""
        return self.triggered / self.known if self.known else None

    @property
    def agreed(self) -> int:
        """Decided trials that did what the label says."""
        return self.triggered if self.expect == "should" else self.not_triggered


@dataclass(frozen=True, slots=True)
class Rate:
    """``hits`` of ``total`` with its Wilson 95 % interval; ``value`` is ``None`` when ``total`` is 0."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        """The point estimate."""
        return self.hits / self.total if self.total else None

    def to_json(self) -> JsonObject:
        """``{"hits", "total", "value", "low", "high"}``; the bounds are ``None`` with the value."""
        if not self.total:
            return {"hits": self.hits, "total": self.total, "value": None, "low": None, "high": None}
        low, high = wilson_interval(self.hits, self.total)
        return {"hits": self.hits, "total": self.total, "value": self.value, "low": low, "high": high}

    def text(self) -> str:
        """``0.83 (10/12)``, or ``n/a (0/0)``."""
        return f"{'n/a' if self.value is None else f'{self.value:.2f}'} ({self.hits}/{self.total})"


@dataclass(frozen=True, slots=True)
class TriggerScore:
    """The confusion table of one skill × agent over its queries, and the rates it gives."""

    tp: int
    fn: int
    fp: int
    tn: int
    unknown: int

    @property
    def precision(self) -> Rate:
        """Of the trials that used the skill, the share whose query should have."""
        return Rate(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> Rate:
        """Of the trials whose query should use the skill, the share that did."""
        return Rate(self.tp, self.tp + self.fn)

    @property
    def accuracy(self) -> Rate:
        """Of all decided trials, the share that did what the label says."""
        return Rate(self.tp + self.tn, self.tp + self.fn + self.fp + self.tn)

    @property
    def f1(self) -> float | None:
        """The harmonic mean of precision and recall; ``None`` when either is undefined or both are 0."""
        p, r = self.precision.value, self.recall.value
        if p is None or r is None or p + r == 0:
            return None if p is None or r is None else 0.0
        return 2 * p * r / (p + r)

    def to_json(self) -> JsonObject:
        """The table and the rates, each rate with its interval."""
        return {
            "confusion": {"tp": self.tp, "fn": self.fn, "fp": self.fp, "tn": self.tn},
            "unknown": self.unknown,
            "precision": self.precision.to_json(),
            "recall": self.recall.to_json(),
            "accuracy": self.accuracy.to_json(),
            "f1": self.f1,
        }


def score(queries: Iterable[QueryCounts], split: str | None = None) -> TriggerScore:
    """The confusion table over ``queries`` (only those of ``split`` when one is given)."""
    tp = fn = fp = tn = unknown = 0
    for query in queries:
        if split is not None and query.split != split:
            continue
        unknown += query.unknown
        if query.expect == "should":
            tp, fn = tp + query.triggered, fn + query.not_triggered
        else:
            fp, tn = fp + query.triggered, tn + query.not_triggered
    return TriggerScore(tp, fn, fp, tn, unknown)
