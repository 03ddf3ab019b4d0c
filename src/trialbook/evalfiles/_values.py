"""Typed reading of node values: each reader returns the value, or records a problem and returns ``None``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

from ._fields import DURATION_PATTERN
from ._nodes import Node
from ._problems import Problems

__all__ = ["DURATION_FORMS", "Reader", "describe", "join", "parse_duration"]

_DURATION = re.compile(DURATION_PATTERN)
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0}


DURATION_FORMS = "use seconds as a number, or a duration such as 90s, 10m, 1h, 1h30m"


def _seconds(value: object) -> float | str:
    """Seconds, or what is wrong with ``value`` as a duration."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return f"{describe(value)} is not a duration"
    if isinstance(value, str):
        if not _DURATION.fullmatch(value.strip()):
            return f"{value!r} is not a duration"
        parts = re.findall(r"([\d.]+)([hms])", value)
        seconds = sum(float(amount) * _UNIT_SECONDS[unit] for amount, unit in parts)
    else:
        seconds = float(value)
    if not math.isfinite(seconds) or seconds <= 0:
        return f"{value!r} is not a positive duration"
    return seconds


def parse_duration(value: object) -> float:
    """Seconds from a positive number or a string such as ``90s``, ``10m``, ``1h``, ``1h30m``.

    Raises:
        ValueError: not a positive number or such a string; the message gives the accepted forms.
    """
    seconds = _seconds(value)
    if isinstance(seconds, str):
        raise ValueError(f"{seconds} ({DURATION_FORMS})")
    return seconds


def describe(value: object) -> str:
    """How an error message names what was written instead of the expected type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, int | float):
        return f"{value!r} (a number)"
    if isinstance(value, str):
        return f"{value!r} (a string)" if len(value) <= 40 else "a string"
    return f"a {type(value).__name__}"


def join(prefix: str, key: str | int) -> str:
    """The field path of ``key`` under ``prefix``: ``shims.npm`` or ``assert[2]``."""
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    return f"{prefix}.{key}" if prefix else key


class Reader:
    """Reads typed values from nodes, recording what is wrong in ``problems``."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems

    def wrong(self, node: Node, field: str, expected: str, example: str) -> None:
        """Record that ``node`` is not what ``field`` takes."""
        self.problems.add(
            node.line, field, f"expected {expected}, got {describe(node.value)}", f"write e.g. {example}"
        )

    def string(self, node: Node, field: str, example: str) -> str | None:
        """A non-empty string."""
        if isinstance(node.value, str) and node.value.strip():
            return node.value
        self.wrong(node, field, "a non-empty string", example)
        return None

    def scalar_text(self, node: Node, field: str, example: str) -> str | None:
        """A string, or a number written as one (``port: 3000``); booleans are refused as ambiguous."""
        value = node.value
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        self.wrong(node, field, "a string or a number (quote true/false/null)", example)
        return None

    def mapping(self, node: Node, field: str, example: str) -> dict[str, Node] | None:
        """A mapping's entries."""
        entries = node.mapping
        if entries is None:
            self.wrong(node, field, "a mapping", example)
        return entries

    def sequence(self, node: Node, field: str, example: str) -> list[Node] | None:
        """A list's items."""
        items = node.items
        if items is None:
            self.wrong(node, field, "a list", example)
        return items

    def filled_sequence(self, node: Node, field: str, example: str, ask: str) -> list[Node] | None:
        """A list's items, at least one: an empty list is a problem whose fix is ``ask``, e.g. ``example``."""
        items = self.sequence(node, field, example)
        if items is not None and not items:
            self.problems.add(node.line, field, "the list is empty", f"{ask}, e.g. {example}")
            return None
        return items

    def only_keys(self, entries: dict[str, Node], prefix: str, known: Iterable[str]) -> None:
        """Record every key of ``entries`` that is not in ``known``."""
        known = tuple(known)
        for key, node in entries.items():
            if key not in known:
                self.problems.unknown_key(node.key_line, join(prefix, key), key, known)

    def integer(self, node: Node, field: str, example: str, *, minimum: int) -> int | None:
        """An integer of at least ``minimum``."""
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int):
            self.wrong(node, field, "an integer", example)
            return None
        if value < minimum:
            self.problems.add(node.line, field, f"{value} is less than {minimum}", f"write e.g. {example}")
            return None
        return value

    def number(self, node: Node, field: str, example: str) -> float | None:
        """A finite number."""
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            self.wrong(node, field, "a number", example)
            return None
        return float(value)

    def duration(self, node: Node, field: str, example: str) -> float | None:
        """Seconds, from a number or a duration string."""
        seconds = _seconds(node.value)
        if isinstance(seconds, str):
            self.problems.add(node.line, field, seconds, f"{DURATION_FORMS}; e.g. {example}")
            return None
        return seconds
