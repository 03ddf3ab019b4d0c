"""Union of two versions of one history file: every line of both sides, none twice, none lost.

History files only ever grow at the end, so the usual case is exact: both sides extend a common base and
the result is the remote's file followed by our new lines. The set-union fallback covers histories that
share no base (two first writers each creating the branch, or a shallow fetch).
"""

from __future__ import annotations

__all__ = ["union_lines"]


def union_lines(base: bytes | None, ours: bytes | None, theirs: bytes | None) -> bytes:
    """Merge one file; the first rule that applies wins.

    1. One side is missing or a line-prefix of the other: take the longer side.
    2. Both sides extend ``base``: ``theirs + ours[len(base):]`` (exact append order), skipping
       any line ``theirs`` already holds.
    3. Otherwise: ``theirs``, then each line of ``ours`` that ``theirs`` lacks.

    Lines are compared as whole byte strings; lines carry a unique ``run_id``, so equal bytes mean
    the same run seen from both sides.
    """
    if ours is None or theirs is None:
        return _normalise(theirs if ours is None else ours)
    mine, other = _split(ours), _split(theirs)
    if _is_prefix(mine, other):
        return _join(other)
    if _is_prefix(other, mine):
        return _join(mine)
    seen = set(other)
    if base is not None:
        common = _split(base)
        if _is_prefix(common, mine) and _is_prefix(common, other):
            # Skipping lines theirs already has costs nothing in a clean history and keeps a line
            # from doubling when the remote's history was rewritten (for example by a forced push).
            return _join(other + [line for line in mine[len(common) :] if line not in seen])
    return _join(other + [line for line in mine if line not in seen])


def _split(data: bytes) -> list[bytes]:
    return [line for line in data.split(b"\n") if line.strip()]


def _join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _normalise(data: bytes | None) -> bytes:
    return _join(_split(data or b""))


def _is_prefix(short: list[bytes], long: list[bytes]) -> bool:
    return len(short) <= len(long) and long[: len(short)] == short
