"""What an assertion sees of a finished trial: its shim call log, its files and a way to run a command.

Assertions stay pure: they read a trial only through :class:`FinishedTrial`, which the sandbox implements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..evidence import AgentResult

__all__ = ["Call", "CommandOutcome", "FinishedTrial"]


@dataclass(frozen=True)
class Call:
    """One call a shim recorded, as a line of the trial's ``calls.jsonl``.

    ``argv[0]`` is the shimmed binary's name as the agent typed it (no directory). ``exit_code`` is
    ``None`` when the call did not finish (killed); ``error`` is set when the shim itself failed, for
    example when a passthrough binary was not found on the original ``PATH``.
    """

    argv: tuple[str, ...]
    cwd: str
    exit_code: int | None
    started_at: float
    duration_ms: float | None
    error: str | None = None
    path: str | None = None
    """The path the binary was called by: the shim's own when found on ``PATH``, ``/usr/bin/npm`` when
    called so under isolation (docs/isolation.md); ``None`` in logs written before shims recorded it."""

    @property
    def line(self) -> str:
        """The call as patterns match it: ``bin arg1 arg2 …`` joined by single spaces."""
        return " ".join(self.argv)


@dataclass(frozen=True)
class CommandOutcome:
    """How a command run in the finished sandbox ended; ``exit_code`` is ``None`` when it timed out."""

    exit_code: int | None
    output: str
    timed_out: bool = False


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
