"""What an assertion sees of a finished trial: its shim call log, its files and a way to run a command.

Assertions stay pure: they read a trial only through :class:`FinishedTrial`, which the sandbox implements.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ..evidence import AgentResult, Call, CommandOutcome

__all__ = ["FinishedTrial"]


class FinishedTrial(Protocol):
    """A trial after its agent stopped, as checks see it."""

    @property
    def calls(self) -> Sequence[Call]:
        """Every shimmed call of this trial, in the order they started."""
        ...

    @property
    def workdir(self) -> Path:
        """The sandbox folder the agent worked in."""
        ...

    @property
    def result(self) -> AgentResult:
        """The agent's evidence for this trial."""
        ...

    def read_text(self, path: str) -> str | None:
        """The text of ``path`` relative to ``workdir``, or ``None`` when it is not a readable file."""
        ...

    def exists(self, path: str) -> bool:
        """Whether ``path`` relative to ``workdir`` exists."""
        ...

    def run(self, command: str, timeout_s: float) -> CommandOutcome:
        """Run a shell command in ``workdir`` with the trial's environment (shims on ``PATH``)."""
        ...
