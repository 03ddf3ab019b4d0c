"""Progress hooks: the runner reports what happens through one small sink and frozen payloads.

Payloads are frozen dataclasses so they can grow without breaking a sink someone else wrote.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["Notice", "ProgressSink", "TrialFinished", "TrialStarted"]


@dataclass(frozen=True)
class Notice:
    """What a front end shows before the first trial: the forecast (``info``) or a ``warning``.

    The level is the front end's to render: the terminal sends warnings to stderr with a ``warning:``
    prefix, ``trialbook ci`` prints both to the step's log.
    """

    level: Literal["info", "warning"]
    text: str

    def __str__(self) -> str:
        return f"warning: {self.text}" if self.level == "warning" else self.text


@dataclass(frozen=True)
class TrialStarted:
    """A trial got its sandbox and its agent is running."""

    eval_id: str
    agent: str
    trial: int
    running: int
    remaining: int


@dataclass(frozen=True)
class TrialFinished:
    """A trial ended; ``summary`` is one already-masked line describing the outcome."""

    eval_id: str
    agent: str
    trial: int
    passed: bool
    stop_reason: str | None
    duration_s: float
    cost_usd: float | None
    summary: str
    done: int
    total: int
    details: tuple[str, ...] = ()
    """For a failed trial, a few masked lines of evidence that explain ``summary`` (output, calls)."""


class ProgressSink(Protocol):
    """Receives progress; implementations must be cheap and must not raise."""

    def trial_started(self, event: TrialStarted) -> None:
        """Called when a trial starts."""
        ...

    def trial_finished(self, event: TrialFinished) -> None:
        """Called when a trial ends."""
        ...
