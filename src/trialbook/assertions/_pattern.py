"""How eval files and checks spell "which call" or "which text": a plain string or a ``/regex/``.

A plain string is the common case (``neon deploy``) and must not match ``neon deployment`` or
``neonx deploy``, so for calls it matches a whole line or a prefix that ends at a word boundary (a space).
A ``/…/`` pattern is searched anywhere in the line, as people expect from grep, with RE2 (linear time,
see :mod:`._regex`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..evidence import JsonValue
from ._regex import Regex, compile_regex

__all__ = ["Pattern", "PatternLike"]


@dataclass(frozen=True)
class Pattern:
    """A call or text pattern as written (``text``), with its compiled regex when it is one."""

    text: str
    regex: Regex | None = None
    flags: int = 0
    """Python ``re`` flags of a compiled pattern a Python eval file passed (they change what matches)."""

    @classmethod
    def parse(cls, text: str) -> Pattern:
        """Read a pattern as eval files write it.

        Raises:
            ValueError: the pattern is empty or its regular expression does not compile; the message says
                what is wrong in words an eval author can act on.
        """
        if not isinstance(text, str):
            raise ValueError(f"a pattern must be a string, not {type(text).__name__}")
        if len(text) >= 2 and text.startswith("/") and text.endswith("/"):
            source = text[1:-1]
            if not source:
                raise ValueError('the regular expression "//" is empty (write what the line must contain)')
            try:
                return cls(text, compile_regex(source))
            except ValueError as exc:
                raise ValueError(f"{text} is not a valid regular expression: {exc}") from None
        if not text.strip():
            raise ValueError("the pattern is empty (write the command, e.g. 'neon deploy', or a /regex/)")
        return cls(text)

    @classmethod
    def of(cls, value: PatternLike) -> Pattern:
        """Accept what Python eval files may pass: a string, a compiled regex or a pattern."""
        if isinstance(value, Pattern):
            return value
        if isinstance(value, re.Pattern):
            flags = value.flags & ~re.UNICODE
            return cls(f"/{value.pattern}/", compile_regex(value.pattern, flags), flags)
        return cls.parse(value)

    @property
    def is_regex(self) -> bool:
        """Whether this pattern is a regular expression."""
        return self.regex is not None

    def matches_call(self, line: str) -> bool:
        """Whether a call line (``bin arg1 arg2``) matches.

        A plain pattern matches the line itself or the line's start followed by a space, so arguments may
        follow but the last word of the pattern may not be the prefix of a longer word.
        """
        if self.regex is not None:
            return self.regex.search(line) is not None
        return line == self.text or line.startswith(self.text + " ")

    def search_text(self, text: str) -> int | None:
        """Offset of the first occurrence in ``text`` (substring, or regex search), or ``None``."""
        if self.regex is not None:
            found = self.regex.search(text)
            return None if found is None else found.start()
        offset = text.find(self.text)
        return None if offset < 0 else offset

    def to_json(self) -> JsonValue:
        """The pattern as written; a compiled regex with flags keeps them, since flags change what matches."""
        if self.regex is not None and self.flags:
            # The same value Python's compiled pattern had, so cache keys do not move.
            return {"regex": self.text[1:-1], "flags": self.flags | re.UNICODE}
        return self.text

    def __str__(self) -> str:
        return self.text


PatternLike = str | re.Pattern[str] | Pattern
"""What assertion constructors accept as a pattern."""
