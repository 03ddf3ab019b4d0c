"""What a trial did, as checks read it: a shim-recorded call and a command run in the finished sandbox.

They live with the evidence because the sandbox writes them and the assertions read them: neither layer
should have to import the other to share two small values.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Call", "CommandOutcome"]


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
