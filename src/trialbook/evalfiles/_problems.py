"""Collecting every problem of an eval file, each as ``file:line: field: what is wrong (how to fix)``.

Eval authors fix files in one pass when they see every problem at once, so readers record problems and
carry on instead of raising at the first one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["Problems", "display_path", "suggest"]


def display_path(path: Path | str) -> str:
    """``path`` relative to the current folder when it is inside it, as users typed it; else absolute."""
    absolute = os.path.abspath(path)
    relative = os.path.relpath(absolute)
    return absolute if relative.startswith("..") else Path(relative).as_posix()


def suggest(word: str, choices: Iterable[str]) -> str | None:
    """The known word closest to a misspelled one, or ``None`` when nothing is close."""
    import difflib  # only a file with a mistake needs it

    found = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return found[0] if found else None


class Problems:
    """The problems found in one file, in the order they were found."""

    def __init__(self, path: Path | str) -> None:
        self.path = display_path(path)
        self._found: list[tuple[int, str]] = []

    @property
    def items(self) -> list[str]:
        """Every problem, by line (readers visit keys in dependency order, authors read top down)."""
        return [text for _, text in sorted(self._found, key=lambda found: found[0])]

    def add(self, line: int, field: str, problem: str, fix: str) -> None:
        """Record one problem; ``fix`` tells the author what to write instead."""
        self.add_message(line, field, f"{problem} ({fix})")

    def add_message(self, line: int, field: str, message: str) -> None:
        """Record one problem whose message already ends with its fix in parentheses."""
        self._found.append((line, f"{self.path}:{line}: {field}: {message}"))

    def extend(self, other: Problems) -> None:
        """Take over the problems another collector found (e.g. in a helper module of a Python eval)."""
        self._found.extend(other._found)

    def unknown_key(self, line: int, field: str, key: str, known: Iterable[str]) -> None:
        """Record a key the reader does not know, with the nearest known one when there is one."""
        known = sorted(known)
        close = suggest(key, known)
        fix = f"did you mean {close}?" if close else "known keys: " + ", ".join(known)
        self.add(line, field, f"unknown key {key!r}", fix)

    def __bool__(self) -> bool:
        return bool(self._found)
