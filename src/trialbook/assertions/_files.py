"""Assertions over the files the agent left in the sandbox."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import ClassVar

from ..evidence import AssertionRecord, JsonObject
from ._base import make_label
from ._pattern import Pattern, PatternLike
from ._trial import FinishedTrial

__all__ = ["FileContains", "FileExists", "file_contains", "file_exists", "sandbox_path"]


def sandbox_path(path: str) -> str:
    """Check that ``path`` stays inside the sandbox, and return it.

    Raises:
        ValueError: the path is empty, absolute or climbs out with ``..``; a check reading outside the
            sandbox would pass or fail on the runner's machine rather than on the agent's work.
    """
    if not isinstance(path, str) or not path.strip():
        raise ValueError("the path is empty (give a path relative to the sandbox, e.g. neon.ts)")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in path):
        # A NUL cannot be in a file name at all; other control bytes are almost always a paste accident.
        raise ValueError(f"{path!r} holds a control character such as NUL (write the path as plain text)")
    pure = PurePosixPath(path)
    if pure.is_absolute() or path.startswith("~"):
        raise ValueError(f"{path} is not relative (paths are relative to the sandbox, e.g. src/index.ts)")
    if ".." in pure.parts:
        raise ValueError(f"{path} leaves the sandbox with '..' (name a file inside the sandbox)")
    return path


@dataclass(frozen=True)
class FileExists:
    """``path`` (a file or folder, relative to the sandbox) exists after the agent finished."""

    path: str
    kind: ClassVar[str] = "file_exists"

    @property
    def label(self) -> str:
        """``file_exists "<path>"``."""
        return make_label(self.kind, self.path)

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass when the path exists in the sandbox."""
        exists = trial.exists(self.path)
        return AssertionRecord(
            kind=self.kind,
            label=self.label,
            passed=exists,
            expected=f"{self.path} exists in the sandbox",
            actual="it exists" if exists else f"{self.path} was not found",
        )

    def to_json(self) -> JsonObject:
        """``{"kind": "file_exists", "path": ...}``."""
        return {"kind": self.kind, "path": self.path}


@dataclass(frozen=True)
class FileContains:
    """The text file ``path`` contains ``pattern`` (a substring, or a ``/regex/`` searched in the text)."""

    path: str
    pattern: Pattern
    kind: ClassVar[str] = "file_contains"

    @property
    def label(self) -> str:
        """``file_contains {"path": ..., "pattern": ...}``."""
        return make_label(self.kind, {"path": self.path, "pattern": self.pattern.text})

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass when the pattern occurs; say where, never what, since files like ``.env`` hold secrets."""
        expected = f'{self.path} contains "{self.pattern}"'
        text = trial.read_text(self.path)
        if text is None:
            actual = f"{self.path} was not found or is not a readable text file"
            return AssertionRecord(self.kind, self.label, False, expected, actual)
        offset = self.pattern.search_text(text)
        if offset is None:
            lines = len(text.splitlines())
            actual = f'no match for "{self.pattern}" in {self.path} ({lines} lines, {len(text)} characters)'
            return AssertionRecord(self.kind, self.label, False, expected, actual)
        line = text.count("\n", 0, offset) + 1
        return AssertionRecord(self.kind, self.label, True, expected, f"found at line {line}")

    def to_json(self) -> JsonObject:
        """``{"kind": "file_contains", "path": ..., "pattern": ...}``."""
        return {"kind": self.kind, "path": self.path, "pattern": self.pattern.to_json()}


def file_exists(path: str) -> FileExists:
    """``path``, relative to the sandbox, exists when the agent has finished."""
    return FileExists(sandbox_path(path))


def file_contains(path: str, pattern: PatternLike) -> FileContains:
    """The text file ``path`` contains ``pattern``: a plain string is a substring, ``/…/`` a regex."""
    return FileContains(sandbox_path(path), Pattern.of(pattern))
