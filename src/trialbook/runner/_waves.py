"""Adaptive trials in the engine: waves of ``min_trials``, and no wave once the verdict is decided.

A wave starts only when every trial of the waves before it has settled (finished, left unstarted by
the budget, or saved), so the decision after a wave sees all of it; trials already running always
finish. The decision itself is :func:`trialbook.scoring.stats.early_verdict`, taken by the entry.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Protocol

__all__ = ["Waves"]


class _Adaptive(Protocol):
    @property
    def settled(self) -> int: ...

    @property
    def min_trials(self) -> int | None: ...

    saved: int

    def decide(self) -> str | None: ...


class Waves:
    """One condition per adaptive entry; entries without ``min_trials`` never wait."""

    def __init__(self, results: Sequence[_Adaptive]) -> None:
        self._gates = {id(result): asyncio.Condition() for result in results if result.min_trials}

    async def needed(self, result: _Adaptive, trial: int) -> bool:
        """Wait for the waves before ``trial``'s; ``False`` (and one more saved) when they decided."""
        gate = self._gates.get(id(result))
        least = result.min_trials
        if gate is None or least is None:
            return True
        before = (trial - 1) // least * least
        if before == 0:
            return True
        async with gate:
            await gate.wait_for(lambda: result.settled >= before)
        if result.decide() is None:
            return True
        result.saved += 1
        return False

    async def settled(self, result: _Adaptive) -> None:
        """A trial of ``result`` settled: let waiting waves look again."""
        gate = self._gates.get(id(result))
        if gate is not None:
            async with gate:
                gate.notify_all()
