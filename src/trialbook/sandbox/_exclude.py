"""Which files of a sandbox template stay out of the trials: ``.git``, ``.trialbook`` and ``exclude:`` globs.

A template is often a whole repository (``sandbox: {template: ..}``). Its ``.git`` folder and trialbook's
own ``.trialbook`` folder (earlier results and transcripts) are never part of what a guide's reader
starts from: copied in, they let the agent read earlier transcripts, and since they change with every
commit and run they would change the cache key every time. The same filter decides what is copied and
what is hashed, so a file that cannot reach a trial cannot move the cache key.

Glob rules (documented in docs/eval-files.md): paths are relative to the template and use ``/``; a
pattern without ``/`` matches a name at any depth (``*.log``, ``node_modules``); a pattern with ``/``
matches from the template's root (``build/out``, ``docs/**/*.png``); ``*`` and ``?`` stay within one name,
``**`` spans folders; a trailing ``/`` matches folders only. An excluded folder is left out whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["ALWAYS_EXCLUDED", "TemplateFilter", "check_pattern"]

ALWAYS_EXCLUDED = (".git", ".trialbook")
"""Names left out of every template copy, at any depth."""


def check_pattern(pattern: str) -> str | None:
    """What is wrong with an ``exclude:`` glob, or ``None`` when it is usable."""
    text = pattern.strip("/")
    if not pattern.strip() or not text:
        return "is empty"
    if "\\" in pattern:
        return "uses '\\'; write paths with '/'"
    if any(part in ("..", ".") for part in text.split("/")):
        return "uses '.' or '..'; write the path from the template folder, e.g. build/out"
    try:
        _compile(pattern)
    except re.error as exc:
        return f"is not a valid glob ({exc})"
    return None


def _segment(part: str) -> str:
    out, i = [], 0
    while i < len(part):
        char = part[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = part.find("]", i + 2 if part[i + 1 : i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                inner = part[i + 1 : end]
                inner = "^" + inner[1:] if inner.startswith("!") else inner
                out.append(f"[{inner.replace(chr(92), chr(92) * 2)}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _compile(pattern: str) -> tuple[re.Pattern[str], bool]:
    """The regex over a relative path, and whether the pattern matches folders only."""
    folders_only = pattern.endswith("/")
    text = pattern.strip("/")
    parts = text.split("/")
    anchored = "/" in text
    pieces = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            pieces.append("" if last else "(?:[^/]+/)*")
            if last:
                pieces.append(".*")
        else:
            pieces.append(_segment(part) + ("" if last else "/"))
    body = "".join(pieces)
    return re.compile(("" if anchored else "(?:.*/)?") + body), folders_only


@dataclass(frozen=True)
class TemplateFilter:
    """Decides, path by path, whether a template entry stays out of the copy and the hash."""

    patterns: tuple[str, ...] = ()
    _compiled: tuple[tuple[re.Pattern[str], bool], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", tuple(_compile(p) for p in self.patterns))

    @classmethod
    def of(cls, patterns: Iterable[str] = ()) -> TemplateFilter:
        """A filter from ``sandbox.exclude`` patterns (``.git`` and ``.trialbook`` are always out)."""
        return cls(tuple(patterns))

    def excluded(self, relative: str, *, is_dir: bool) -> bool:
        """Whether the entry at ``relative`` (POSIX, from the template root) is left out."""
        name = relative.rsplit("/", 1)[-1]
        if name in ALWAYS_EXCLUDED:
            return True
        return any(
            regex.fullmatch(relative) and (is_dir or not folders_only)
            for regex, folders_only in self._compiled
        )

    def kept(self, relative: str, *, is_dir: bool) -> bool:
        """Whether the entry at ``relative`` is copied and hashed; also false under an excluded folder."""
        parts = relative.split("/")
        for depth in range(1, len(parts)):
            if self.excluded("/".join(parts[:depth]), is_dir=True):
                return False
        return not self.excluded(relative, is_dir=is_dir)
