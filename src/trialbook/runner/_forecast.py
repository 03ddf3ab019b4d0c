"""What a run will cost and how long it will take, from history, before any trial starts.

Per eval × agent: the median cost and the median duration per trial over its recent history lines,
times the trials planned (the maximum, for adaptive trials). Wall time replays the engine's order
(trial 1 of every eval first) on ``concurrency`` slots. A pair without history is ``unknown``, never
free and never instant; totals say how many pairs they leave out.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .._util.words import plural
from ..history import HistoryLine
from ._plan import PlanEntry

__all__ = ["Forecast", "PairForecast", "forecast"]


@dataclass(frozen=True)
class PairForecast:
    """One eval × agent: trials planned and the medians per trial (``None`` without history)."""

    key: str
    trials: int
    cost_per_trial: float | None
    seconds_per_trial: float | None


@dataclass(frozen=True)
class Forecast:
    """The whole run's expected cost and wall time."""

    pairs: tuple[PairForecast, ...]
    concurrency: int

    @property
    def trials(self) -> int:
        """Trials planned."""
        return sum(pair.trials for pair in self.pairs)

    @property
    def known_cost_usd(self) -> float:
        """Expected cost of the pairs whose cost history knows (a lower bound when some are unknown)."""
        return sum(p.cost_per_trial * p.trials for p in self.pairs if p.cost_per_trial is not None)

    @property
    def unknown_cost(self) -> int:
        """Pairs with no known cost in history."""
        return sum(1 for pair in self.pairs if pair.cost_per_trial is None)

    @property
    def cost_usd(self) -> float | None:
        """Expected cost; ``None`` when some pair's cost is unknown."""
        return None if self.unknown_cost else self.known_cost_usd

    @property
    def wall_s(self) -> float | None:
        """Expected wall time at ``concurrency``; ``None`` when some pair's duration is unknown."""
        if any(pair.seconds_per_trial is None for pair in self.pairs):
            return None
        slots = [0.0] * max(1, self.concurrency)
        depth = max((pair.trials for pair in self.pairs), default=0)
        for n in range(depth):
            for pair in self.pairs:
                if n < pair.trials:
                    assert pair.seconds_per_trial is not None
                    heapq.heappush(slots, heapq.heappop(slots) + pair.seconds_per_trial)
        return max(slots)

    def describe(self) -> str:
        """One line: ``forecast: 12 trials of 4 eval × agent pairs: cost $0.42, wall time 1m 30s …``."""
        if not self.pairs:
            return "forecast: nothing to run"
        total = len(self.pairs)
        from ..report.terminal import format_usd  # pure, and small

        if self.cost_usd is not None:
            cost = format_usd(self.cost_usd)
        elif self.unknown_cost == total:
            cost = "unknown (no cost in history)"
        else:
            cost = f"at least {format_usd(self.known_cost_usd)} (unknown for {self.unknown_cost} of {total})"
        wall = self.wall_s
        unknown_time = sum(1 for pair in self.pairs if pair.seconds_per_trial is None)
        if wall is not None:
            from ..report.markdown import format_duration  # the renderers, loaded only to word a known time

            time = f"{format_duration(wall)} at concurrency {self.concurrency}"
        else:
            time = f"unknown (no history for {unknown_time} of {total})"
        return (
            f"forecast: {plural(self.trials, 'trial')} of {plural(total, 'eval × agent pair')}: cost {cost}, "
            f"wall time {time} (medians from history)"
        )


def _median(values: Sequence[float]) -> float | None:
    if not values:
        return None
    import statistics  # only a forecast from history has values: a run without history never loads it

    return statistics.median(values)


def forecast(
    plan: Sequence[PlanEntry], lines: Mapping[str, Sequence[HistoryLine]], *, concurrency: int
) -> Forecast:
    """The forecast of the ``run`` entries of ``plan`` from ``lines`` (recent history, by plan key)."""
    pairs = []
    for entry in plan:
        if entry.action != "run":
            continue
        known = [line for line in lines.get(entry.key, ()) if line.trials > 0]
        costs = [line.cost_usd / line.trials for line in known if line.cost_usd is not None]
        seconds = [line.duration_s / line.trials for line in known if line.duration_s is not None]
        pairs.append(PairForecast(entry.key, entry.spec.trials, _median(costs), _median(seconds)))
    return Forecast(tuple(pairs), concurrency)
