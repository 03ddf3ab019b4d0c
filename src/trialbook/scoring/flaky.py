"""How an eval × agent behaves on the base branch over recent runs: stable, flaky, regressed, recovered.

A single failing PR run of an eval that fails a third of the time on the base branch is not news; the
same failure of an eval that always passed is. This module turns a window of history lines into a class
and a pooled pass rate with its interval, and tests a new run against that window, so the verdict can
say which of the two a reviewer is looking at. Pure: it reads only fields every history line has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from .stats import (
    DEFAULT_ALPHA,
    RegressionTest,
    fisher_one_sided_less,
    regression_test,
    wilson_interval,
)

__all__ = [
    "MIN_RUNS",
    "WINDOW",
    "Flakiness",
    "RunLike",
    "Stability",
    "against_window",
    "is_base_run",
    "stability",
]

Flakiness = Literal["stable-pass", "stable-fail", "flaky", "regressed", "recovered", "insufficient-data"]

MIN_RUNS = 3
"""Fewer decided runs than this say nothing about stability."""

WINDOW = 20
"""Base-branch runs a verdict is compared with: enough to see a 1-in-3 failure, recent enough to matter."""


class RunLike(Protocol):
    """The fields of a history line the classification reads."""

    @property
    def verdict(self) -> str:
        """pass, fail, error or incomplete."""

    @property
    def passed(self) -> int:
        """Trials that passed."""

    @property
    def trials(self) -> int:
        """Trials that ran."""

    @property
    def commit(self) -> str | None:
        """The commit the run tested, None when unknown."""

    @property
    def agent_version(self) -> str | None:
        """The agent's version, None when unknown."""

    @property
    def started_at(self) -> str:
        """ISO-8601 UTC start time ending in Z."""


def is_base_run(run: object) -> bool:
    """Whether a line was recorded outside a pull request (PR runs test code that was never merged)."""
    extra: Mapping[str, Any] = getattr(run, "extra", None) or {}
    return not str(extra.get("ref", "")).startswith("refs/pull/")


@dataclass(frozen=True, kw_only=True)
class Stability:
    """An eval × agent over its window of runs.

    Attributes:
        flakiness: the class; ``regressed``/``recovered`` when the verdicts changed once, for good, at a
            point where the pooled trials before and after differ significantly.
        changed_at: the commit of the first run after the change (``None`` when unknown or no change).
        runs: decided runs (pass or fail) in the window.
        passed: trials that passed, summed over those runs.
        trials: trials that ran, summed over those runs.
        agent_versions: the agent versions of those runs, oldest first, each change listed once.
    """

    flakiness: Flakiness
    changed_at: str | None
    runs: int
    passed: int
    trials: int
    agent_versions: tuple[str | None, ...]

    @property
    def interval(self) -> tuple[float, float] | None:
        """Wilson 95% interval of the pooled pass rate, ``None`` without trials."""
        return wilson_interval(self.passed, self.trials) if self.trials else None

    @property
    def label(self) -> str:
        """``flaky``, ``regressed at abc1234`` …, for tables."""
        if self.flakiness in ("regressed", "recovered"):
            return f"{self.flakiness} at {(self.changed_at or 'unknown')[:7]}"
        return self.flakiness


def _when(run: RunLike) -> datetime:
    return datetime.fromisoformat(run.started_at.replace("Z", "+00:00"))


def _versions(runs: Sequence[RunLike]) -> tuple[str | None, ...]:
    out: list[str | None] = []
    for run in runs:
        if not out or out[-1] != run.agent_version:
            out.append(run.agent_version)
    return tuple(out)


def _change_point(decided: Sequence[RunLike], alpha: float) -> tuple[Flakiness, str | None] | None:
    verdicts = [run.verdict for run in decided]
    first, last = verdicts[0], verdicts[-1]
    if first == last:
        return None
    split = verdicts.index(last)
    if any(v != first for v in verdicts[:split]) or any(v != last for v in verdicts[split:]):
        return None
    before, after = decided[:split], decided[split:]
    pb, tb = sum(r.passed for r in before), sum(r.trials for r in before)
    pa, ta = sum(r.passed for r in after), sum(r.trials for r in after)
    if last == "fail":
        p = fisher_one_sided_less(pb, tb, pa, ta)
        return ("regressed", after[0].commit) if p <= alpha else None
    p = fisher_one_sided_less(pa, ta, pb, tb)
    return ("recovered", after[0].commit) if p <= alpha else None


def stability(runs: Sequence[RunLike], *, alpha: float = DEFAULT_ALPHA) -> Stability:
    """Classify ``runs`` (any order); errors and incomplete runs are not evidence either way.

    ``stable-pass``: every trial of every run passed; ``stable-fail``: none did. ``regressed at C``:
    the runs passed up to commit C and failed from it on, and a one-sided Fisher exact test of the
    pooled trials before against after says the drop is real (p ≤ ``alpha``); ``recovered at C`` the
    other way round. Anything else that mixes passing and failing trials is ``flaky``.
    """
    decided = sorted((run for run in runs if run.verdict in ("pass", "fail")), key=_when)
    passed = sum(run.passed for run in decided)
    trials = sum(run.trials for run in decided)
    flakiness: Flakiness
    changed_at: str | None = None
    if len(decided) < MIN_RUNS:
        flakiness = "insufficient-data"
    elif passed == trials and all(run.verdict == "pass" for run in decided):
        flakiness = "stable-pass"
    elif passed == 0 and all(run.verdict == "fail" for run in decided):
        flakiness = "stable-fail"
    else:
        change = _change_point(decided, alpha)
        flakiness, changed_at = change if change is not None else ("flaky", None)
    return Stability(
        flakiness=flakiness,
        changed_at=changed_at,
        runs=len(decided),
        passed=passed,
        trials=trials,
        agent_versions=_versions(decided),
    )


def against_window(
    window: Stability, passed: int, trials: int, *, alpha: float = DEFAULT_ALPHA
) -> RegressionTest | None:
    """One-sided Fisher exact test of this run's trials against the window's pooled trials.

    Not regressed means the run is within the eval's usual range: a rate this low turns up by chance
    often enough (p > ``alpha``) given how the eval did over the window.
    """
    if window.trials == 0 or trials == 0:
        return None
    return regression_test(window.passed, window.trials, passed, trials, alpha=alpha)
