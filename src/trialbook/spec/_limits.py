"""The ``limits:`` key: bounds an eval sets on what its trials may produce (pure).

Today that is ``output``, the bytes kept of each captured stream (see
:mod:`trialbook.sandbox._capture`), written as a byte count or a size such as ``512KiB`` or ``20MB``.
"""

from __future__ import annotations

import re

from ..sandbox._capture import DEFAULT_OUTPUT_LIMIT, MIN_OUTPUT_LIMIT
from ._context import Context
from ._fields import SIZE_PATTERN
from ._nodes import Node

__all__ = ["MAX_OUTPUT_LIMIT", "SIZE_PATTERN", "parse_size", "read_limits"]

MAX_OUTPUT_LIMIT = 1 << 30
"""1 GiB per stream: trialbook holds up to this much of a stream in memory while it runs."""


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


def read_limits(node: Node, ctx: Context) -> int | None:
    """The per-stream output limit in bytes (the default when ``output`` is not given); ``None`` if wrong."""
    entries = ctx.read.mapping(node, "limits", _EXAMPLE)
    if entries is None:
        return None
    ctx.read.only_keys(entries, "limits", ("output",))
    value = entries.get("output")
    if value is None:
        return DEFAULT_OUTPUT_LIMIT
    size = parse_size(value.value)
    if isinstance(size, str):
        ctx.problems.add(value.line, "limits.output", size, f"e.g. {_EXAMPLE}")
        return None
    if not MIN_OUTPUT_LIMIT <= size <= MAX_OUTPUT_LIMIT:
        fix = "give at least 1KiB and at most 1GiB per stream, e.g. " + _EXAMPLE
        ctx.problems.add(value.line, "limits.output", f"{size} bytes is out of range", fix)
        return None
    return size
