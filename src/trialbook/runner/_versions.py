"""Two versions of one agent on the same evals, side by side (pure): the canary beside the pin.

An eval that lists ``{name: claude-code, version: 2.1.197}`` and ``{name: claude-code, version: latest}``
runs both as ordinary plan entries (labels ``claude-code-2.1.197`` and ``claude-code-latest``); only here
are they compared. Each compared pair gives both versions' counts and the two-sided Fisher exact test
between them, so "the newest release fails what the pinned one passes" comes with how sure that is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..evidence import JsonObject, JsonValue
from ..report.versions import describe, headlines
from ..scoring.stats import fisher_two_sided
from ._arms import _counts
from ._engine import EntryResult
from ._plan import PlanEntry

__all__ = ["VersionDrift", "VersionRun", "drift_headlines", "version_drift"]

ALPHA = Fraction(1, 10)
"""Significance level of "differ": the level trialbook's regression flag uses."""


@dataclass(frozen=True)
class VersionRun:
    """One version's result on one eval: its label, the exact version it ran, and its counts."""

    label: str
    version: str | None
    passed: int
    trials: int
    verdict: str | None


@dataclass(frozen=True)
class VersionDrift:
    """One eval's results on two versions of one agent, the newer-listed first as the eval lists them."""

    eval_id: str
    agent: str
    first: VersionRun
    second: VersionRun
    p_value: Fraction

    @property
    def differs(self) -> bool:
        """Whether the two pass rates differ at :data:`ALPHA`."""
        return self.p_value <= ALPHA

    @property
    def regressed(self) -> str | None:
        """The label of the version that fails an eval the other passes, if their verdicts split so."""
        if self.first.verdict == "pass" and self.second.verdict in ("fail", "error"):
            return self.second.label
        if self.second.verdict == "pass" and self.first.verdict in ("fail", "error"):
            return self.first.label
        return None

    def text(self) -> str:
        """``2.1.197 (claude-code-2.1.197) 3/3 · 2.1.332 (claude-code-latest) 0/3 · differ, p = 0.1``."""
        return describe(self.to_json())

    def to_json(self) -> JsonObject:
        """The manifest's ``versions`` entry."""
        runs: list[JsonValue] = [
            {
                "label": r.label,
                "version": r.version,
                "passed": r.passed,
                "trials": r.trials,
                "verdict": r.verdict,
            }
            for r in (self.first, self.second)
        ]
        return {
            "id": self.eval_id,
            "agent": self.agent,
            "runs": runs,
            "p_value": float(self.p_value),
            "differs": self.differs,
            "regressed": self.regressed,
        }


def _verdict(result: EntryResult | None, entry: PlanEntry) -> str | None:
    if result is not None and result.outcomes:
        verdict = getattr(result, "verdict", None)
        return verdict if isinstance(verdict, str) else None
    last = entry.last
    verdict = getattr(last, "verdict", None) if entry.action == "cached" else None
    return verdict if isinstance(verdict, str) else None


def version_drift(plan: Sequence[PlanEntry], results: Sequence[EntryResult]) -> list[VersionDrift]:
    """For every eval that lists one agent at two or more versions, each version against the first one."""
    by_key = {result.entry.key: result for result in results}
    groups: dict[tuple[str, str], list[PlanEntry]] = {}
    for entry in plan:
        if entry.arm == "without" or entry.spec.trigger is not None or entry.control:
            continue
        groups.setdefault((entry.spec.id, entry.agent.name), []).append(entry)
    found: list[VersionDrift] = []
    for (eval_id, agent), entries in groups.items():
        versioned = [e for e in entries if e.agent.options.get("version") is not None]
        if len(entries) < 2 or not versioned:
            continue
        runs = []
        for entry in entries:
            counts = _counts(entry, by_key.get(entry.key))
            if counts is None:
                continue
            passed, trials = counts[0], counts[1]
            version = getattr(entry.last, "agent_version", None) if entry.action == "cached" else None
            runs.append(
                VersionRun(
                    entry.label,
                    entry.agent_version or (version if isinstance(version, str) else None),
                    passed,
                    trials,
                    _verdict(by_key.get(entry.key), entry),
                )
            )
        for other in runs[1:]:
            first = runs[0]
            p_value = fisher_two_sided(first.passed, first.trials, other.passed, other.trials)
            found.append(VersionDrift(eval_id, agent, first, other, p_value))
    return found


def drift_headlines(drifts: Sequence[VersionDrift]) -> list[str]:
    """Per pair of versions: ``claude-code-latest fails 3 evals claude-code-2.1.197 passes: a, b, c``."""
    return headlines([drift.to_json() for drift in drifts])
