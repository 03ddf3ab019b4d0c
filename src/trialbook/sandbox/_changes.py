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
from collections.abc import Collection, Iterable, Iterator, Mapping
from pathlib import Path

from .._records import FrozenRecord, frozen_record
from ..evidence import JsonObject, JsonValue
from ..masking import Masker
from ._exclude import TemplateFilter

__all__ = [
    "CHANGES_FILE",
    "MAX_DIFF_BYTES",
    "MAX_ENTRIES",
    "MAX_HASH_BYTES",
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
MAX_HASH_BYTES = 256 * 1024 * 1024
"""Files larger than this (by their size, before anything is read) are listed by size alone, unhashed:
``truncate -s 200G`` makes a file of that apparent size in no time, and hashing it would read every
byte. Two such files of the same size count as unchanged."""


_FILE, _LINK, _OTHER = "file", "link", "other"
_Found = tuple[str, str | None]
"""A listed path and what the listing said it is (``None``: unknown, ask the file system)."""

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def _files(root: Path | None, *, follow_root: bool = True) -> dict[str, _Found]:
    """Every file and link under ``root`` by its ``/``-separated relative path; folders are walked.

    One ``scandir`` per folder and nothing per entry: the listing says what each entry is (on file
    systems whose listing cannot, ``DirEntry`` asks). A symlink to a folder is listed as a link, never
    walked into. Without ``follow_root`` a ``root`` that is itself a link lists nothing: the agent can
    replace its workdir with a link to anywhere, and the record must not walk wherever that leads.
    """
    if root is None:
        return {}
    top = os.fspath(root)
    if not follow_root:
        try:
            if stat.S_ISLNK(os.lstat(top).st_mode):
                return {}
        except OSError:
            return {}
    found: dict[str, _Found] = {}
    pending = [("", top)]
    while pending:
        prefix, folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        for entry in entries:
            rel = prefix + entry.name
            kind: str | None
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((rel + "/", entry.path))
                    continue
                kind = (
                    _LINK if entry.is_symlink() else _FILE if entry.is_file(follow_symlinks=False) else _OTHER
                )
            except OSError:
                kind = None
            found[rel] = (entry.path, kind)
    return found


@frozen_record
class _Large(FrozenRecord):
    """A file too large to hold: compared and shown by size and a hash streamed from disk.

    ``sha256`` is ``None`` for a file past :data:`MAX_HASH_BYTES`: it was never read.
    """

    size: int
    sha256: str | None


def _read_all(fd: int, size: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, max(size + 1, 1 << 16)):
        chunks.append(chunk)
    return b"".join(chunks)


def _stream_hash(fd: int) -> str:
    digest = hashlib.sha256()
    while block := os.read(fd, 1 << 20):
        digest.update(block)
    return digest.hexdigest()


def _content(found: _Found) -> bytes | _Large | None:
    """What to compare: a link's target, a regular file's data, ``None`` for anything else.

    FIFOs, sockets and devices are never opened (reading a FIFO would block the run); a file is read
    through one descriptor that follows no link and waits on nothing, and checked again once open.
    """
    path, kind = found
    try:
        if kind is None:
            mode = os.lstat(path).st_mode
            kind = _LINK if stat.S_ISLNK(mode) else _FILE if stat.S_ISREG(mode) else _OTHER
        if kind == _LINK:
            return b"-> " + os.fsencode(os.readlink(path))
        if kind != _FILE:
            return None
        fd = os.open(path, _READ_FLAGS)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None
            if info.st_size > MAX_HASH_BYTES:
                return _Large(info.st_size, None)
            if info.st_size > MAX_TEXT_BYTES:
                return _Large(info.st_size, _stream_hash(fd))
            return _read_all(fd, info.st_size)
        finally:
            os.close(fd)
    except OSError:
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
        unhashed: JsonObject = {"hashed": False} if data.sha256 is None else {}
        return {"size": data.size, "sha256": data.sha256, **unhashed}
    return {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _cut(text: str, limit: int) -> tuple[str, bool]:
    raw = text.encode("utf-8")
    if len(raw) <= limit:
        return text, False
    return raw[:limit].decode("utf-8", "ignore"), True


def _shown(rel: str) -> str:
    r"""``rel`` as text JSON can hold: a name that is not UTF-8 keeps its other bytes as ``\xNN``.

    The listing decodes names with ``surrogateescape`` (an agent can make any byte string a name);
    written as is, such a name could not be encoded into ``changes.json`` at all.
    """
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(rel).decode("utf-8", "backslashreplace")
    return rel


def _diff_lines(before: list[str], after: list[str], old_name: str, new_name: str) -> Iterable[str]:
    """``difflib.unified_diff(..., n=3)`` of two files' lines, without its matcher where one side is empty.

    A created or deleted file (the usual entry: an agent writes new files) is one hunk of every line,
    which needs no sequence matching; the text is exactly difflib's.
    """
    if before and after:
        return difflib.unified_diff(before, after, old_name, new_name, n=3)
    if not before and not after:
        return ()
    lines = after or before
    span = "1" if len(lines) == 1 else f"1,{len(lines)}"
    ranges, sign = (f"-0,0 +{span}", "+") if after else (f"-{span} +0,0", "-")
    return [f"--- {old_name}\n", f"+++ {new_name}\n", f"@@ {ranges} @@\n", *(sign + line for line in lines)]


def _entry(
    rel: str, old: bytes | _Large | None, new: bytes | _Large | None, masker: Masker, budget: int
) -> JsonObject:
    status = "created" if old is None else "deleted" if new is None else "modified"
    # Mask first, then hash, diff and cut: a hash of a secret-only file or a secret split by the cut
    # would otherwise leak it.
    old = masker.bytes(old) if isinstance(old, bytes) else old
    new = masker.bytes(new) if isinstance(new, bytes) else new
    entry: dict[str, JsonValue] = {
        "path": _shown(masker.text(rel)),
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
    lines = _diff_lines(before, after, f"a/{entry['path']}", f"b/{entry['path']}")
    diff = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    diff, truncated = _cut(diff, min(MAX_DIFF_BYTES, max(budget, 0)))
    entry["diff"] = diff
    entry["diff_truncated"] = truncated
    return entry


_Content = bytes | _Large | None


def _changed(
    template: dict[str, _Found], work: dict[str, _Found]
) -> Iterator[tuple[str, _Content, _Content]]:
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
    keep: TemplateFilter | None = None,
) -> JsonObject:
    """Compare ``workdir`` with the ``template`` it was copied from (an empty folder when ``None``).

    ``placed`` maps sandbox paths trialbook put there itself (declared instruction files and skills) to
    the file each was copied from: that file is their starting point, so only the agent's edits show.
    ``replaced`` names the paths placing cleared first: the template's files at or under them are not
    part of the starting point (trialbook removed them, not the agent). ``keep`` is the template's
    ``sandbox.exclude`` filter (``.git`` and ``.trialbook`` always out): paths it leaves out of the copy
    are compared on neither side, so the record is the agent's changes against exactly what it was given.

    Returns a JSON object: ``files`` (one entry per changed path, sorted), ``counts`` per status,
    ``omitted`` (changed paths past :data:`MAX_ENTRIES`) and the limits that applied.
    """
    entries: list[JsonValue] = []
    counts = {"created": 0, "modified": 0, "deleted": 0}
    omitted = 0
    budget = MAX_TOTAL_DIFF_BYTES
    kept = keep if keep is not None else TemplateFilter.of()
    start = {
        rel: path
        for rel, path in _files(template).items()
        if kept.kept(rel, is_dir=False)
        and not any(rel == root or rel.startswith(root + "/") for root in replaced)
    }
    given = {rel: (os.fspath(path), None) for rel, path in (placed or {}).items()}
    now = {
        rel: path for rel, path in _files(workdir, follow_root=False).items() if kept.kept(rel, is_dir=False)
    }
    for rel, old, new in _changed({**start, **given}, now):
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
        "max_hash_bytes": MAX_HASH_BYTES,
    }
    return {"files": entries, "counts": dict(counts), "omitted": omitted, "limits": limits}
