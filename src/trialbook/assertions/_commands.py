"""The ``succeeds`` assertion: a shell command run in the finished sandbox exits as expected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..evidence import AssertionRecord, JsonObject
from ._base import make_label
from ._trial import FinishedTrial

__all__ = ["DEFAULT_SUCCEEDS_TIMEOUT_S", "Succeeds", "succeeds"]

DEFAULT_SUCCEEDS_TIMEOUT_S = 120.0
"""Long enough for a build or a test run, short enough that a hung server does not eat the trial budget."""

OUTPUT_TAIL_LINES = 30
"""How much of the command's output a failed record keeps: the end is where the error usually is."""
OUTPUT_TAIL_CHARS = 4096
"""And at most this many characters of it, so one endless line is not kept whole."""


@dataclass(frozen=True)
class Succeeds:
    """``command`` exits with ``exit_code`` within ``timeout_s`` seconds."""

    command: str
    exit_code: int = 0
    timeout_s: float = DEFAULT_SUCCEEDS_TIMEOUT_S
    kind: ClassVar[str] = "succeeds"

    @property
    def label(self) -> str:
        """``succeeds "<command>"``, with the exit code when it is not 0."""
        if self.exit_code == 0:
            return make_label(self.kind, self.command)
        return make_label(self.kind, {"command": self.command, "exit_code": self.exit_code})

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Run the command in the sandbox; a failure keeps the end of its output to show why."""
        expected = f"`{self.command}` exits with {self.exit_code}"
        outcome = trial.run(self.command, self.timeout_s)
        if outcome.timed_out or outcome.exit_code is None:
            actual = f"timed out after {self.timeout_s:g}s"
        else:
            actual = f"exited with {outcome.exit_code}"
        passed = not outcome.timed_out and outcome.exit_code == self.exit_code
        if not passed and outcome.output.strip():
            tail = "\n".join(outcome.output.rstrip()[-OUTPUT_TAIL_CHARS:].splitlines()[-OUTPUT_TAIL_LINES:])
            actual += "; output ends with:\n" + tail
        return AssertionRecord(self.kind, self.label, passed, expected, actual)

    def to_json(self) -> JsonObject:
        """The command, expected exit code and timeout: each can change the verdict."""
        return {
            "kind": self.kind,
            "command": self.command,
            "exit_code": self.exit_code,
            "timeout_s": self.timeout_s,
        }


def succeeds(command: str, exit_code: int = 0, timeout_s: float = DEFAULT_SUCCEEDS_TIMEOUT_S) -> Succeeds:
    """Running ``command`` with the shell in the sandbox exits with ``exit_code`` (default 0).

    Raises:
        ValueError: the command is empty, the exit code is not an integer or the timeout is not positive.
    """
    if not isinstance(command, str) or not command.strip():
        raise ValueError("the command is empty (write the shell command to run, e.g. 'npm run build')")
    if isinstance(exit_code, bool) or not isinstance(exit_code, int):
        raise ValueError(f"exit_code must be an integer, not {exit_code!r}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or not timeout_s > 0:
        raise ValueError(f"timeout_s must be a positive number of seconds, not {timeout_s!r}")
    return Succeeds(command, exit_code, float(timeout_s))
