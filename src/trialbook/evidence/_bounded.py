"""JSON from files others can write, read with a nesting bound.

``json.loads`` recurses once per nesting level: a line of a thousand ``[`` raises ``RecursionError``
(not ``ValueError``) and one a few levels under the limit decodes into a value that later breaks
whatever walks it. History lines, call logs and hand-over files are written by people and agents, so
they are decoded here: deeper than :data:`MAX_JSON_DEPTH` is an ordinary decoding error, reported and
skipped like any invalid line.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_JSON_DEPTH", "loads_bounded"]

MAX_JSON_DEPTH = 64
"""Lists and objects nested inside each other; trialbook's own records need about six."""

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(rb"[\[\]{}]")


def loads_bounded(data: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """``json.loads(data)``, refusing a value nested deeper than ``max_depth``.

    Raises:
        ValueError: not JSON, or nested too deep (the message says which).
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    depth = 0
    # Brackets inside strings do not nest: strings go first (one pass in C), then only brackets count.
    for match in _BRACKETS.finditer(_STRINGS.sub(b'""', raw)):
        if match[0] in b"[{":
            depth += 1
            if depth > max_depth:
                raise ValueError(f"nested deeper than {max_depth} levels of lists and objects")
        else:
            depth -= 1
    try:
        return json.loads(raw)
    except RecursionError:  # unreachable within the bound; kept so no input can escape as a crash
        raise ValueError(f"nested deeper than {max_depth} levels of lists and objects") from None
