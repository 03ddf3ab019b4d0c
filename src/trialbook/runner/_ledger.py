"""The budget ledger: stop starting trials once the run has spent what it may."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["BudgetLedger"]


@dataclass
class BudgetLedger:
    """Running total of known spend against an optional limit.

    Trials whose cost is unknown are counted separately rather than as free, so the summary can name them
    and a reader knows the total is a lower bound.
    """

    limit_usd: float | None
    spent_usd: float = 0.0
    unknown_cost_trials: list[str] = field(default_factory=list)
    estimated_cost_trials: list[str] = field(default_factory=list)
    judge_spent_usd: float = 0.0
    """The part of ``spent_usd`` the judges cost: it counts against the limit like the agents' cost."""

    def record(
        self, label: str, cost_usd: float | None, *, estimated: bool = False, judges: bool = False
    ) -> None:
        """Add a finished trial's cost, or remember that it is unknown; estimates count, and are named.

        ``judges``: the cost is that of a trial's judges, reported apart from the agents'.
        """
        if cost_usd is None:
            self.unknown_cost_trials.append(label)
            return
        if estimated:
            self.estimated_cost_trials.append(label)
        self.spent_usd += cost_usd
        if judges:
            self.judge_spent_usd += cost_usd

    @property
    def exhausted(self) -> bool:
        """Whether no new trial may start."""
        return self.limit_usd is not None and self.spent_usd >= self.limit_usd
