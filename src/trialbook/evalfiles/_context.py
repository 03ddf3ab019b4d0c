"""What the readers of one eval definition share: where it lives, what is known, what went wrong."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from ._problems import Problems
from ._values import Reader

__all__ = ["Context"]


@dataclass
class Context:
    """One eval definition being read.

    ``secrets`` is ``None`` until (or when) the ``secrets`` key could not be read; checks that depend on
    it are skipped then, so one mistake is reported once, not again at every use of a secret.
    """

    source: Path
    evals_root: Path
    problems: Problems
    known_agents: Collection[str]
    secrets: tuple[str, ...] | None = ()
    lines: dict[str, int] = field(default_factory=dict)
    read: Reader = field(init=False)
    """Typed readers that report into this definition's problems."""

    def __post_init__(self) -> None:
        self.read = Reader(self.problems)

    @property
    def folder(self) -> Path:
        """The folder relative paths in the eval file start from."""
        return self.source.parent

    def where(self, line: int) -> str:
        """``file:line``, as agent specs record where they were written."""
        return f"{self.problems.path}:{line}"

    def invalid(self, line: int, field: str, message: str, fix: str) -> None:
        """Record a value error whose message may already end with its own fix in parentheses."""
        if message.endswith(")"):
            self.problems.add_message(line, field, message)
        else:
            self.problems.add(line, field, message, fix)

    def check_secret_use(self, names: Collection[str], line: int, field: str) -> None:
        """Every ``{{ secrets.NAME }}`` used must be declared under ``secrets:``."""
        if self.secrets is None:
            return
        for name in dict.fromkeys(names):
            if name not in self.secrets:
                self.problems.add(
                    line,
                    field,
                    "{{ secrets." + name + " }} is used but not declared",
                    f"add {name} to secrets: [...]",
                )
