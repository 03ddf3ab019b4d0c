"""The one error tree of trialbook: every failure a user can cause maps to a documented exit code.

Front ends (the CLI, the action entry point) catch :class:`TrialbookError` and exit with its
``exit_code`` after printing its message, so a bad input never ends in a traceback.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "BudgetForecastError",
    "ConfigError",
    "ExitCode",
    "RefusedRunError",
    "RunAbortedError",
    "TrialbookError",
    "UsageError",
]


class ExitCode:
    """The documented exit codes of ``trialbook``."""

    OK = 0
    FAILED = 1
    BAD_INPUT = 2
    BUDGET = 3


class TrialbookError(Exception):
    """Base of every error trialbook raises on purpose; carries the exit code it maps to."""

    exit_code: ClassVar[int] = ExitCode.BAD_INPUT


class UsageError(TrialbookError):
    """The command line or environment asked for something that cannot be done."""


class ConfigError(TrialbookError):
    """An input file is wrong. The message names the file, the field and the fix.

    Args:
        problems: one line per problem, each already naming ``file:line: field: what is wrong``.
    """

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class RefusedRunError(TrialbookError):
    """Running agents was refused, e.g. outside CI without ``--unsafe-local``."""


class RunAbortedError(TrialbookError):
    """The run could not go on (a file-system error writing results or preparing a sandbox)."""

    exit_code = ExitCode.FAILED


class BudgetForecastError(TrialbookError):
    """``--budget-strict``: the forecast from history is above ``--budget-usd``, so nothing was started."""

    exit_code = ExitCode.BUDGET
