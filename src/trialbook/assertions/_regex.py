r"""Regular expressions in linear time: RE2 for every ``/regex/`` an eval file or a check writes.

Python's ``re`` backtracks: ``/^(a+)+$/`` over forty ``a`` and a ``b`` takes longer than any trial, and
holds the interpreter lock the whole time, so neither the trial's timeout nor Ctrl-C can stop it. RE2
(Google's engine, through ``google-re2``) matches in time linear in the text and refuses the few
constructs that need backtracking (backreferences, lookaround), so a careless pattern is refused when
the eval file is read instead of hanging a run.

The dialect is RE2's (docs/assertions.md): Perl-style classes, groups, alternation, ``{m,n}``, flags
written inline (``(?i)``, ``(?s)``, ``(?m)``). ``\d``, ``\w``, ``\s`` and ``\b`` are ASCII, and ``$``
without ``(?m)`` matches only at the very end of the text.
"""

from __future__ import annotations

import re
from typing import Protocol

import re2

__all__ = ["Regex", "compile_regex"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # the refusal is reported to the author, not logged to stderr by the engine

_UNSUPPORTED = (
    (re.compile(r"\\[1-9]|\(\?P=|\\g<"), "a backreference"),
    (re.compile(r"\(\?<?[=!]"), "a lookahead or lookbehind"),
    (re.compile(r"\(\?>|[*+?}]\+"), "an atomic group or possessive quantifier"),
    (re.compile(r"\(\?\("), "a conditional group"),
)
_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))


class Match(Protocol):
    """What trialbook reads of a match."""

    def start(self) -> int:
        """Offset of the match in the text."""
        ...


class Regex(Protocol):
    """A compiled RE2 expression, as much of its interface as trialbook uses."""

    @property
    def pattern(self) -> str:
        """The expression as written."""
        ...

    def search(self, text: str) -> Match | None:
        """The first match anywhere in ``text``."""
        ...


def _why(source: str, engine_message: str) -> str:
    try:
        # Python's parser words plain syntax errors best ("unterminated subpattern at position 5");
        # compiling is cheap and bounded, only matching can backtrack.
        re.compile(source)
    except re.error as exc:
        return str(exc)
    for finder, construct in _UNSUPPORTED:
        if finder.search(source):
            return (
                f"it uses {construct}, which needs backtracking; trialbook matches patterns in linear time "
                "(RE2) so a pattern can never hang a run: rewrite it without, or check with assert_that"
            )
    return engine_message


def compile_regex(source: str, flags: int = 0) -> Regex:
    """Compile ``source`` with RE2; Python ``re`` flags (i, m, s) become inline flags.

    Raises:
        ValueError: RE2 cannot compile it; the message says why in words an eval author can act on.
    """
    unknown = flags & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.UNICODE)
    if unknown:
        raise ValueError(f"the regex flags {re.RegexFlag(unknown)!r} are not supported (use i, m or s)")
    inline = "".join(letter for flag, letter in _FLAGS if flags & flag)
    text = f"(?{inline}){source}" if inline else source
    try:
        compiled: Regex = re2.compile(text, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0] if exc.args else exc
        message = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
        raise ValueError(_why(source, message)) from None
    return compiled
