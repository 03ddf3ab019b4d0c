"""What the agent changed in its sandbox: created, modified and deleted files against the template.

Recorded once the agent stops (before checks run commands of their own in the workdir), so the record is
evidence of the agent's work alone. Text files get a unified diff, binary files their size and SHA-256.
Every file is masked before it is hashed, diffed or cut (sizes and hashes are of the masked bytes), and
every record is bounded: a diff is cut at
:data:`MAX_DIFF_BYTES`, all diffs together at :data:`MAX_TOTAL_DIFF_BYTES`, and at most
:data:`MAX_ENTRIES` paths are listed (the rest are counted in ``omitted``).

The record also holds what rebuilds the final sandbox from its starting files (``trialbook rescore``):
each changed path's final kind, permission bits, link target or whole content (up to
:data:`MAX_CONTENT_BYTES` per trial), and the folders the agent made or removed. A path whose final
state cannot be kept exactly (its content held a secret and was masked, or it is past a limit) says why
in its ``rebuild`` object, and the record's top-level ``rebuild`` object says whether the whole
sandbox can be rebuilt.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import os
import stat
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..evidence import JsonObject, JsonValue
from ..masking import Masker
from ._exclude import TemplateFilter

__all__ = [
    "CHANGES_FILE",
    "MAX_CONTENT_BYTES",
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
MAX_CONTENT_BYTES = 4 * 1024 * 1024
"""Whole content kept per trial to rebuild its final sandbox; files past it are kept by hash only."""


_FILE, _LINK, _OTHER = "file", "link", "other"
_Found = tuple[str, str | None]
"""A listed path and what the listing said it is (``None``: unknown, ask the file system)."""

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


def _files(
    root: Path | None, *, follow_root: bool = True, folders: set[str] | None = None
) -> dict[str, _Found]:
    """Every file and link under ``root`` by its ``/``-separated relative path; folders are walked.

    ``folders`` (when given) receives the relative path of every folder walked.

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
                    if folders is not None:
                        folders.add(rel)
                    continue
                kind = (
                    _LINK if entry.is_symlink() else _FILE if entry.is_file(follow_symlinks=False) else _OTHER
                )
            except OSError:
                kind = None
            found[rel] = (entry.path, kind)
    return found


@dataclass(frozen=True)
class _Large:
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


_LINK_PREFIX = b"-> "
"""How a link reads in a diff and its ``before``/``after`` hash: ``-> target``."""


@dataclass(frozen=True)
class _Link:
    """A symbolic link's target: never equal to a file's content, even one that reads ``-> target``."""

    target: bytes

    @property
    def shown(self) -> bytes:
        """The link as its diff shows it."""
        return _LINK_PREFIX + self.target


def _content(found: _Found) -> tuple[_Content, int | None]:
    """What to compare: a link's target or a regular file's data and permission bits; ``None`` else.

    FIFOs, sockets and devices are never opened (reading a FIFO would block the run); a file is read
    through one descriptor that follows no link and waits on nothing, and checked again once open. Its
    mode comes from that descriptor, so it costs no call of its own.
    """
    path, kind = found
    try:
        if kind is None:
            mode = os.lstat(path).st_mode
            kind = _LINK if stat.S_ISLNK(mode) else _FILE if stat.S_ISREG(mode) else _OTHER
        if kind == _LINK:
            return _Link(os.fsencode(os.readlink(path))), None
        if kind != _FILE:
            return None, None
        fd = os.open(path, _READ_FLAGS)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, None
            bits = stat.S_IMODE(info.st_mode)
            if info.st_size > MAX_HASH_BYTES:
                return _Large(info.st_size, None), bits
            if info.st_size > MAX_TEXT_BYTES:
                return _Large(info.st_size, _stream_hash(fd)), bits
            return _read_all(fd, info.st_size), bits
        finally:
            os.close(fd)
    except OSError:
        return None, None


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


def _entry(rel: str, old_content: _Content, new_content: _Content, masker: Masker, budget: int) -> JsonObject:
    status = "created" if old_content is None else "deleted" if new_content is None else "modified"
    old = old_content.shown if isinstance(old_content, _Link) else old_content
    new = new_content.shown if isinstance(new_content, _Link) else new_content
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


_Content = bytes | _Link | _Large | None


def _changed(
    template: dict[str, _Found], work: dict[str, _Found], placed: Collection[str]
) -> Iterator[tuple[str, _Content, _Content, int | None]]:
    """Each changed path: its content before and after, and its permission bits after.

    A placed file is compared by content alone: placing writes it with modes of its own, which
    placing it again for a rebuild gives it again.
    """
    for rel in sorted(template.keys() | work.keys()):
        old, old_mode = _content(template[rel]) if rel in template else (None, None)
        new, new_mode = _content(work[rel]) if rel in work else (None, None)
        if rel in placed:
            old_mode = new_mode
        if old != new or (new is not None and old_mode != new_mode):
            yield rel, old, new, new_mode


def _final(
    rel: str, shown: str, new: _Content, mode: int | None, masker: Masker, budget: int
) -> tuple[JsonObject, int]:
    """How to rebuild ``rel`` as the agent left it, and the content bytes that took.

    ``missing`` says why the path cannot be rebuilt exactly (``None`` when it can): a name, link
    target or content the masker changed is kept masked, which is not what the agent wrote.
    """
    final: dict[str, JsonValue] = {"kind": "gone" if new is None else "file", "mode": None, "missing": None}
    if new is None:
        return _missing(final, "its name held a secret (masked)" if shown != rel else None), 0
    if shown != rel:
        return _missing(final, "its name held a secret or was not UTF-8, and is kept masked"), 0
    if isinstance(new, _Large):
        return _missing(final, f"larger than {MAX_TEXT_BYTES} bytes, kept by size and hash only"), 0
    if isinstance(new, _Link):
        final["kind"] = "link"
        target = _text(new.target)
        if target is None or masker.text(target) != target:
            return _missing(final, "its link target held a secret or was not UTF-8"), 0
        final["target"] = target
        return final, 0
    final["mode"] = None if mode is None else f"{mode:04o}"
    if masker.bytes(new) != new:
        return _missing(final, "its content held a secret, kept masked"), 0
    if len(new) > budget:
        return _missing(final, f"past the {MAX_CONTENT_BYTES}-byte content limit of a trial"), 0
    text = _text(new)
    if text is not None:
        final["text"] = text
    else:
        final["base64"] = base64.b64encode(new).decode("ascii")
    return final, len(new)


def _missing(final: dict[str, JsonValue], why: str | None) -> JsonObject:
    final["missing"] = why
    return final


def _folders(start: set[str], now: set[str], masker: Masker) -> tuple[JsonObject, list[str]]:
    """The folders the agent made and removed, and why the list cannot rebuild them (empty: it can)."""
    made, removed = sorted(now - start), sorted(start - now, reverse=True)  # deepest removed first
    problems: list[str] = []
    if len(made) + len(removed) > MAX_ENTRIES:
        problems.append(f"more than {MAX_ENTRIES} folders were made or removed")
        made, removed = made[:MAX_ENTRIES], removed[: max(0, MAX_ENTRIES - len(made))]
    if any(_shown(masker.text(rel)) != rel for rel in (*made, *removed)):
        problems.append("a folder's name held a secret or was not UTF-8, and is kept masked")
    shown = {"folders_created": [_shown(masker.text(r)) for r in made]}
    shown["folders_deleted"] = [_shown(masker.text(r)) for r in removed]
    return {key: list[JsonValue](value) for key, value in shown.items()}, problems


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

    Returns a JSON object: ``files`` (one entry per changed path, sorted, each with a ``rebuild``
    object), ``counts`` per status, ``omitted`` (changed paths past :data:`MAX_ENTRIES`), ``rebuild``
    (whether the final sandbox can be rebuilt from the record, the folders made and removed) and the
    limits that applied.
    """
    kept = keep if keep is not None else TemplateFilter.of()
    before: set[str] = set()
    after: set[str] = set()

    def starting(rel: str) -> bool:
        return not any(rel == root or rel.startswith(root + "/") for root in replaced)

    start = {
        rel: path
        for rel, path in _files(template, folders=before).items()
        if kept.kept(rel, is_dir=False) and starting(rel)
    }
    given = {rel: (os.fspath(path), None) for rel, path in (placed or {}).items()}
    found = _files(workdir, follow_root=False, folders=after)
    now = {rel: path for rel, path in found.items() if kept.kept(rel, is_dir=False)}
    problems = [
        f"{_shown(masker.text(rel))} is not a file, folder or link"
        for rel, (_, k) in now.items()
        if k == _OTHER
    ]
    entries, counts, omitted = _entries(_changed({**start, **given}, now, given.keys()), masker, problems)
    if omitted:
        problems.append(f"{omitted} changed paths past the {MAX_ENTRIES}-entry limit are not listed")
    folders, folder_problems = _folders(
        {rel for rel in before if kept.kept(rel, is_dir=True) and starting(rel)},
        {rel for rel in after if kept.kept(rel, is_dir=True)},
        masker,
    )
    problems += folder_problems
    rebuild: JsonObject = {"complete": not problems, "problems": list[JsonValue](problems), **folders}
    return {
        "files": entries,
        "counts": dict(counts),
        "omitted": omitted,
        "rebuild": rebuild,
        "limits": _limits(),
    }


def _limits() -> JsonObject:
    """The limits a record was made under, written beside it so a reader knows what was cut."""
    return {
        "max_entries": MAX_ENTRIES,
        "max_diff_bytes": MAX_DIFF_BYTES,
        "max_total_diff_bytes": MAX_TOTAL_DIFF_BYTES,
        "max_text_bytes": MAX_TEXT_BYTES,
        "max_hash_bytes": MAX_HASH_BYTES,
        "max_content_bytes": MAX_CONTENT_BYTES,
    }


def _entries(
    changed: Iterable[tuple[str, _Content, _Content, int | None]], masker: Masker, problems: list[str]
) -> tuple[list[JsonValue], dict[str, int], int]:
    """One entry per changed path up to :data:`MAX_ENTRIES` (diffs and contents within their budgets).

    Returns the entries, the counts per status (every change, listed or not) and how many were left out;
    a masked name is added to ``problems`` once.
    """
    entries: list[JsonValue] = []
    counts = {"created": 0, "modified": 0, "deleted": 0}
    omitted = 0
    budget = MAX_TOTAL_DIFF_BYTES
    content_left = MAX_CONTENT_BYTES
    named = ""
    for rel, old, new, mode in changed:
        status = "created" if old is None else "deleted" if new is None else "modified"
        counts[status] += 1
        if len(entries) >= MAX_ENTRIES:
            omitted += 1
            continue
        entry = _entry(rel, old, new, masker, budget)
        diff = entry.get("diff")
        if isinstance(diff, str):
            budget -= len(diff.encode("utf-8"))
        if entry["path"] != rel and not named:
            named = f"a changed path's name held a secret or was not UTF-8: {entry['path']}"
            problems.append(named)
        final, used = _final(rel, str(entry["path"]), new, mode, masker, content_left)
        content_left -= used
        entries.append({**entry, "rebuild": final})
    return entries, counts, omitted
