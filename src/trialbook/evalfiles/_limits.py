"""The ``limits:`` key: bounds an eval sets on what its trials may produce and how long checks take (pure).

``output`` is the bytes kept of each captured stream (see :mod:`trialbook.sandbox._capture`), written as
a byte count or a size such as ``512KiB`` or ``20MB``; ``checks`` is the time a trial's checks may take
together once its agent finished, a duration such as ``90s`` (default: :func:`check_deadline`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..sandbox import DEFAULT_OUTPUT_LIMIT, MIN_OUTPUT_LIMIT
from ._context import Context
from ._fields import SIZE_PATTERN
from ._nodes import Node

__all__ = [
    "CHECKS_BASE_S",
    "MAX_OUTPUT_LIMIT",
    "SIZE_PATTERN",
    "Limits",
    "check_deadline",
    "parse_size",
    "read_limits",
]

CHECKS_BASE_S = 60.0
"""What a trial's checks get beyond the timeouts of their ``succeeds`` commands: reading files and the
call log, matching patterns (linear time) and ``assert_that`` code take seconds, not minutes."""

MAX_OUTPUT_LIMIT = 1 << 30
"""1 GiB per stream: trialbook holds up to this much of a stream in memory while it runs."""


@dataclass(frozen=True, slots=True)
class Limits:
    """``limits:`` as read: bytes kept per stream, and the check deadline when the eval sets one."""

    output: int = DEFAULT_OUTPUT_LIMIT
    checks_s: float | None = None


def check_deadline(written_s: float | None, succeeds_timeouts: Sequence[float]) -> float:
    """Seconds a trial's checks may take: as written, else 60 s plus every ``succeeds`` command's timeout."""
    return written_s if written_s is not None else CHECKS_BASE_S + sum(succeeds_timeouts)


_UNITS = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_EXAMPLE = "limits: {output: 20MiB}"


def parse_size(value: object) -> int | str:
    """Bytes from an integer or a size string, or the reason the value is not a size."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return "expected a number of bytes or a size such as 20MiB"
    if isinstance(value, int):
        return value
    match = re.fullmatch(SIZE_PATTERN, value.strip())
    if match is None:
        return (
            f"{value!r} is not a size; write bytes (20971520) or a number with B, KB, MB, GB, KiB, MiB or GiB"
        )
    return int(float(value.strip()[: match.start(2)]) * _UNITS[match.group(2)])


def read_limits(node: Node, ctx: Context) -> Limits | None:
    """The ``limits`` key (defaults for what it does not set); ``None`` when a value is wrong."""
    entries = ctx.read.mapping(node, "limits", _EXAMPLE)
    if entries is None:
        return None
    ctx.read.only_keys(entries, "limits", ("output", "checks"))
    output, checks = DEFAULT_OUTPUT_LIMIT, None
    value = entries.get("output")
    if value is not None:
        size = parse_size(value.value)
        if isinstance(size, str):
            ctx.problems.add(value.line, "limits.output", size, f"e.g. {_EXAMPLE}")
            return None
        if not MIN_OUTPUT_LIMIT <= size <= MAX_OUTPUT_LIMIT:
            fix = "give at least 1KiB and at most 1GiB per stream, e.g. " + _EXAMPLE
            ctx.problems.add(value.line, "limits.output", f"{size} bytes is out of range", fix)
            return None
        output = size
    if "checks" in entries:
        checks = ctx.read.duration(entries["checks"], "limits.checks", "limits: {checks: 90s}")
        if checks is None:
            return None
    return Limits(output, checks)
