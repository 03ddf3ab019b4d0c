"""Assertions over the shim call log: what the agent ran, did not run, and in which order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from ..evidence import AssertionRecord, Call, JsonObject
from ._base import describe_calls, make_label, numbered
from ._pattern import Pattern, PatternLike
from ._trial import FinishedTrial

__all__ = ["NotRan", "Ran", "RanInOrder", "not_ran", "ran", "ran_in_order"]


def _matching(pattern: Pattern, calls: Sequence[Call]) -> list[tuple[int, Call]]:
    return [(index, call) for index, call in enumerate(calls, start=1) if pattern.matches_call(call.line)]


@dataclass(frozen=True)
class _OnePattern:
    """What ``ran`` and ``not_ran`` share: one pattern, labelled and described the same way."""

    pattern: Pattern
    kind: ClassVar[str]

    @property
    def label(self) -> str:
        """``ran "<pattern>"`` or ``not_ran "<pattern>"``."""
        return make_label(self.kind, self.pattern.text)

    def to_json(self) -> JsonObject:
        """``{"kind": "ran", "pattern": ...}`` (or ``"not_ran"``)."""
        return {"kind": self.kind, "pattern": self.pattern.to_json()}


@dataclass(frozen=True)
class Ran(_OnePattern):
    """Some shimmed call matches ``pattern``."""

    kind: ClassVar[str] = "ran"

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass when at least one call matches; on failure show every call that was made."""
        calls = trial.calls
        found = _matching(self.pattern, calls)
        actual = f"matched:\n{numbered(found)}" if found else f"no call matched; {describe_calls(calls)}"
        return AssertionRecord(
            kind=self.kind,
            label=self.label,
            passed=bool(found),
            expected=f'a call matching "{self.pattern}"',
            actual=actual,
        )


@dataclass(frozen=True)
class NotRan(_OnePattern):
    """No shimmed call matches ``pattern``."""

    kind: ClassVar[str] = "not_ran"

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass when nothing matches; on failure list the offending calls with their numbers."""
        calls = trial.calls
        found = _matching(self.pattern, calls)
        actual = f"matched:\n{numbered(found)}" if found else f"no call matched ({len(calls)} calls seen)"
        return AssertionRecord(
            kind=self.kind,
            label=self.label,
            passed=not found,
            expected=f'no call matching "{self.pattern}"',
            actual=actual,
        )


@dataclass(frozen=True)
class RanInOrder:
    """Calls matching each pattern happened in this order; other calls may come between them."""

    patterns: tuple[Pattern, ...]
    kind: ClassVar[str] = "ran_in_order"

    @property
    def label(self) -> str:
        """``ran_in_order ["<a>", "<b>"]``."""
        return make_label(self.kind, [pattern.text for pattern in self.patterns])

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Match each pattern at its earliest call after the previous match.

        Taking the earliest match never loses a valid order, so a failure here means no order exists.
        """
        calls = trial.calls
        expected = "calls matching " + ", then ".join(f'"{p}"' for p in self.patterns) + ", in this order"
        found: list[tuple[int, Call]] = []
        position = 0
        for pattern in self.patterns:
            hit = next(
                (i for i in range(position, len(calls)) if pattern.matches_call(calls[i].line)),
                None,
            )
            if hit is None:
                actual = f"{self._missing(pattern, found, calls)}\n{describe_calls(calls)}"
                return AssertionRecord(self.kind, self.label, False, expected, actual)
            found.append((hit + 1, calls[hit]))
            position = hit + 1
        return AssertionRecord(self.kind, self.label, True, expected, f"matched in order:\n{numbered(found)}")

    @staticmethod
    def _missing(pattern: Pattern, found: Sequence[tuple[int, Call]], calls: Sequence[Call]) -> str:
        if not found:
            return f'"{pattern}" matched no call'
        index, call = found[-1]
        message = f'"{pattern}" was not found after call {index} ({call.line})'
        earlier = [i for i, _ in _matching(pattern, calls[:index])]
        if earlier:
            message += f"; it matched only earlier, at call {', '.join(map(str, earlier))}"
        return message

    def to_json(self) -> JsonObject:
        """``{"kind": "ran_in_order", "patterns": [...]}``."""
        return {"kind": self.kind, "patterns": [pattern.to_json() for pattern in self.patterns]}


def ran(pattern: PatternLike) -> Ran:
    """Some shimmed call matches ``pattern`` (``"neon deploy"`` or ``"/neon init .*--project-id/"``)."""
    return Ran(Pattern.of(pattern))


def not_ran(pattern: PatternLike) -> NotRan:
    """No shimmed call matches ``pattern``."""
    return NotRan(Pattern.of(pattern))


def ran_in_order(patterns: Sequence[PatternLike]) -> RanInOrder:
    """Calls matching each of ``patterns`` happened in this order, with other calls allowed between.

    Raises:
        ValueError: ``patterns`` is empty or a single string (a list was meant), or a pattern is invalid.
    """
    if isinstance(patterns, str):
        raise ValueError("ran_in_order takes a list of patterns, not one string (wrap it in [...])")
    if not patterns:
        raise ValueError("ran_in_order needs at least one pattern (list the calls in their expected order)")
    return RanInOrder(tuple(Pattern.of(pattern) for pattern in patterns))
