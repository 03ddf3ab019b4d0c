"""Eval id <-> history file path, shared by the directory store and the git-branch store.

An id such as ``setup/neon`` becomes ``setup/neon.jsonl``: ``/`` makes subfolders, so a repository with a
thousand evals keeps small tree objects (each append rewrites only the trees on its own path). Inside a
component, anything outside a conservative set is percent-encoded, so ids stay portable file names and
decode back exactly.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

from trialbook.errors import UsageError

__all__ = ["SUFFIX", "id_to_parts", "parts_to_id"]

SUFFIX = ".jsonl"
# Characters kept as they are; everything else (space, %, :, \, non-ASCII ...) is percent-encoded.
_SAFE = "-_.~+@=,"


def id_to_parts(eval_id: str) -> tuple[str, ...]:
    """Path components of the history file for ``eval_id``, the last one ending in ``.jsonl``.

    Raises:
        UsageError: an empty id or an empty component (``a//b``, a leading or trailing ``/``).
    """
    if not eval_id:
        raise UsageError("a history id must not be empty")
    raw = eval_id.split("/")
    if any(not part for part in raw):
        raise UsageError(f"history id {eval_id!r} has an empty path component; remove the extra '/'")
    parts = [_encode(part) for part in raw]
    # A folder named like a history file ("x.jsonl/") would collide with the file of id "x".
    parts[:-1] = [p[: -len(SUFFIX)] + "%2Ejsonl" if p.endswith(SUFFIX) else p for p in parts[:-1]]
    parts[-1] += SUFFIX
    return tuple(parts)


def parts_to_id(parts: tuple[str, ...]) -> str | None:
    """The id stored at these path components, or ``None`` when they are not a history file."""
    if not parts or not parts[-1].endswith(SUFFIX) or len(parts[-1]) == len(SUFFIX):
        return None
    names = [*parts[:-1], parts[-1][: -len(SUFFIX)]]
    return "/".join(unquote(name) for name in names)


def _encode(part: str) -> str:
    encoded = quote(part, safe=_SAFE)
    if set(encoded) == {"."}:
        # "." and ".." are not file names; encoding them keeps the id while giving a real name.
        encoded = "%2E" * len(encoded)
    return encoded
