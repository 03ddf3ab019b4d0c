"""What the agent changed in its sandbox: created, modified and deleted files against the template.

Recorded once the agent stops (before checks run commands of their own in the workdir), so the record is
evidence of the agent's work alone. Text files get a unified diff, binary files their size and SHA-256.
Every file is masked before it is hashed, diffed or cut (sizes and hashes are of the masked bytes), and
every record is bounded: a diff is cut at
:data:`MAX_DIFF_BYTES`, all diffs together at :data:`MAX_TOTAL_DIFF_BYTES`, and at most
:data:`MAX_ENTRIES` paths are listed (the rest are counted in ``omitted``).
"""

from __future__ import annotations

import difflib
import hashlib
import os
import stat
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from .._records import FrozenRecord
from ..evidence import JsonObject, JsonValue
from ..masking import Masker

__all__ = [
    "CHANGES_FILE",
    "MAX_DIFF_BYTES",
    "MAX_ENTRIES",
    "MAX_TEXT_BYTES",
    "MAX_TOTAL_DIFF_BYTES",
    "record_changes",
]

CHANGES_FILE = "changes.json"
MAX_ENTRIES = 1000
MAX_DIFF_BYTES = 64 * 1024
MAX_TOTAL_DIFF_BYTES = 1024 * 1024
MAX_TEXT_BYTES = 2 * 1024 * 1024
"""Files larger than this are compared by size and hash only, never diffed."""


def _files(root: Path | None) -> dict[str, Path]:
    if root is None or not root.is_dir():
        return {}
    found: dict[str, Path] = {}
    for folder, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        base = Path(folder)
        # A symlink to a folder is listed as a link, not walked into.
        for name in [*names, *(d for d in dirs if (base / d).is_symlink())]:
            path = base / name
            found[path.relative_to(root).as_posix()] = path
    return found


@dataclass(frozen=True, eq=False, repr=False)
class _Large(FrozenRecord):
    """A file too large to hold: compared and shown by size and a hash streamed from disk."""

    size: int
    sha256: str


def _stream_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _content(path: Path) -> bytes | _Large | None:
    """What to compare: a link's target, a regular file's data, ``None`` for anything else.

    FIFOs, sockets and devices are never opened (reading a FIFO would block the run).
    """
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return b"-> " + os.fsencode(os.readlink(path))
        if stat.S_ISREG(info.st_mode):
            if info.st_size > MAX_TEXT_BYTES:
                return _Large(info.st_size, _stream_hash(path))
            return path.read_bytes()
    except OSError:
        return None
    return None


def _text(data: bytes | _Large | None) -> str | None:
    if not isinstance(data, bytes) or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _side(data: bytes | _Large | None) -> JsonObject | None:
    if data is None:
        return None
    if isinstance(data, _Large):
        return {"size": data.size, "sha256": data.sha256}
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _cut(text: str, limit: int) -> tuple[str, bool]:
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text, False
    return raw[:limit].decode("utf-8", "ignore"), True


def _entry(
    rel: str, old: bytes | _Large | None, new: bytes | _Large | None, masker: Masker, budget: int
) -> JsonObject:
    status = "created" if old is None else "deleted" if new is None else "modified"
    # Mask first, then hash, diff and cut: a hash of a secret-only file or a secret split by the cut
    # would otherwise leak it.
    old = masker.bytes(old) if isinstance(old, bytes) else old
    new = masker.bytes(new) if isinstance(new, bytes) else new
    entry: dict[str, JsonValue] = {
        "path": masker.text(rel),
        "status": status,
        "before": _side(old),
        "after": _side(new),
    }
    old_text, new_text = _text(old), _text(new)
    binary = (old is not None and old_text is None) or (new is not None and new_text is None)
    entry["binary"] = binary
    if binary:
        return entry
    before = masker.text(old_text or "").splitlines(keepends=True)
    after = masker.text(new_text or "").splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, f"a/{entry['path']}", f"b/{entry['path']}", n=3)
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    diff, truncated = _cut(diff, min(MAX_DIFF_BYTES, max(budget, 0)))
    entry["diff"] = diff
    entry["diff_truncated"] = truncated
    return entry


_Content = bytes | _Large | None


def _changed(template: dict[str, Path], work: dict[str, Path]) -> Iterator[tuple[str, _Content, _Content]]:
    for rel in sorted(template.keys() | work.keys()):
        old = _content(template[rel]) if rel in template else None
        new = _content(work[rel]) if rel in work else None
        if old != new:
            yield rel, old, new


def record_changes(
    template: Path | None,
    workdir: Path,
    masker: Masker,
    placed: Mapping[str, Path] | None = None,
    replaced: Collection[str] = (),
) -> JsonObject:
    """Compare ``workdir`` with the ``template`` it was copied from (an empty folder when ``None``).

    ``placed`` maps sandbox paths trialbook put there itself (declared instruction files and skills) to
    the file each was copied from: that file is their starting point, so only the agent's edits show.
    ``replaced`` names the paths placing cleared first: the template's files at or under them are not
    part of the starting point (trialbook removed them, not the agent).

    Returns a JSON object: ``files`` (one entry per changed path, sorted), ``counts`` per status,
    ``omitted`` (changed paths past :data:`MAX_ENTRIES`) and the limits that applied.
    """
    entries: list[JsonValue] = []
    counts = {"created": 0, "modified": 0, "deleted": 0}
    omitted = 0
    budget = MAX_TOTAL_DIFF_BYTES
    start = {
        rel: path
        for rel, path in _files(template).items()
        if not any(rel == root or rel.startswith(root + "/") for root in replaced)
    }
    for rel, old, new in _changed({**start, **(placed or {})}, _files(workdir)):
        status = "created" if old is None else "deleted" if new is None else "modified"
        counts[status] += 1
        if len(entries) >= MAX_ENTRIES:
            omitted += 1
            continue
        entry = _entry(rel, old, new, masker, budget)
        diff = entry.get("diff")
        if isinstance(diff, str):
            budget -= len(diff.encode("utf-8"))
        entries.append(entry)
    limits: JsonObject = {
        "max_entries": MAX_ENTRIES,
        "max_diff_bytes": MAX_DIFF_BYTES,
        "max_total_diff_bytes": MAX_TOTAL_DIFF_BYTES,
        "max_text_bytes": MAX_TEXT_BYTES,
    }
    return {"files": entries, "counts": dict(counts), "omitted": omitted, "limits": limits}
