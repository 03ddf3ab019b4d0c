"""Reuse a finished trial's folders for the next trial, once they are exactly as a fresh one's would be.

A trial's sandbox is four folders (the trial folder, ``work/``, ``home/``, ``tmp/``). Making and
removing them costs more than their few system calls suggest: on an ext4 file system without a journal
every new file or folder scans past the inodes deleted in the last minute or more of its block group
(``recently_deleted``), so each folder a trial deletes makes every later create slower, the runner's
and the agents' alike. A run therefore keeps finished trials' folders, empties them in the background
and gives them to the next trial, under a new name.

A kept folder is given out only when nothing tells it from a fresh one. When its trial folder is made,
each of the four is marked (inode, device, mode, owner, size, file flags, extended attributes, which
hold ACLs); after the trial's processes have ended, :func:`reset_shell` opens each without following
links, empties it, and compares it with its mark. Anything different, or any error, and the whole
folder is removed as before. Then the trial folder is renamed to a name no folder had before, so a
path one trial saw never names the next trial's folder. A ``work/`` made as a template copy is not
kept (it is removed and copied afresh), nor anything else in the trial folder (shims, call log).
"""

from __future__ import annotations

import fcntl
import itertools
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from .._util.owner import temp_prefix
from ._empty import FOLDER_FLAGS, empty_folder, listing, remove_entry

__all__ = ["Mark", "Shell", "mark_shell", "reset_shell"]

_GET_FLAGS = 0x80086601
"""``FS_IOC_GETFLAGS`` on Linux (``chattr``'s flags: immutable, append-only, no-atime, ...)."""

_names = itertools.count()
_names_lock = threading.Lock()


@dataclass(frozen=True)
class Mark:
    """What a fresh folder looked like; a reused one must look the same once emptied.

    ``flags`` and ``xattrs`` are ``None`` where the file system has none to read; ``xattrs`` holds each
    attribute's value with its name, since an agent can change an inherited ACL's value and keep its name.
    """

    dev: int
    ino: int
    mode: int
    uid: int
    gid: int
    size: int
    flags: int | None
    xattrs: tuple[tuple[str, bytes], ...] | None


@dataclass(frozen=True)
class Shell:
    """A trial folder emptied for reuse: its path and the marks of the folders it keeps (``""``: itself)."""

    path: Path
    marks: tuple[tuple[str, Mark], ...]


def _flags(folder: int) -> int | None:
    try:
        return int.from_bytes(fcntl.ioctl(folder, _GET_FLAGS, bytes(8))[:4], "little")
    except OSError:  # the file system has no such flags (ENOTTY) or refuses to say
        return None


def _xattrs(folder: int) -> tuple[tuple[str, bytes], ...] | None:
    listxattr = getattr(os, "listxattr", None)  # Linux only
    if listxattr is None:
        return None
    try:
        names = sorted(listxattr(folder))
    except OSError:  # no extended attributes on this file system
        return None
    # A value that cannot be read raises: a mark must never pass for one it cannot tell apart.
    return tuple((name, os.getxattr(folder, name)) for name in names)


def _mark(folder: int) -> Mark:
    st = os.fstat(folder)
    return Mark(
        st.st_dev, st.st_ino, st.st_mode, st.st_uid, st.st_gid, st.st_size, _flags(folder), _xattrs(folder)
    )


def mark_shell(path: Path, names: tuple[str, ...]) -> tuple[tuple[str, Mark], ...] | None:
    """Mark the trial folder at ``path`` (as ``""``) and its fresh sub-folders ``names``.

    ``None`` when a folder cannot be marked in full: then the trial's folders are removed, not reused.
    """
    marks: list[tuple[str, Mark]] = []
    try:
        for name in ("", *names):
            folder = os.open(path / name if name else path, FOLDER_FLAGS)
            try:
                marks.append((name, _mark(folder)))
            finally:
                os.close(folder)
    except OSError:
        return None
    return tuple(marks)


def _fresh_name(parent: Path) -> Path:
    # Longer than ``mkdtemp``'s 8 random characters and counted per process, so it names no folder
    # that ever existed; the owner prefix keeps the sweep of a killed run's left-overs finding it.
    with _names_lock:
        number = next(_names)
    return parent / f"{temp_prefix()}r{number}x{os.urandom(8).hex()}"


def reset_shell(path: Path, marks: tuple[tuple[str, Mark], ...]) -> Shell | None:
    """Empty the trial folder at ``path`` for reuse, renamed; ``None`` if it must be removed instead.

    Only call this once nothing of the trial runs. Entries other than the marked folders are removed;
    the marked ones are emptied. ``None`` (the folder left for the caller to remove) when a marked
    folder is missing, a link, or differs from its mark once emptied, or when anything fails.
    """
    expected = dict(marks)
    top = expected.get("")
    if top is None:
        return None
    try:
        root = os.open(path, FOLDER_FLAGS)
    except OSError:
        return None
    try:
        entries = listing(root)
        found = {name for name, _ in entries}
        if any(name and name not in found for name in expected):
            return None
        for name, is_folder in entries:
            if name in expected:
                if not _reset(root, name, expected[name]):
                    return None
            else:
                remove_entry(root, name, is_folder=is_folder)
        if _mark(root) != top:
            return None
    except (OSError, ValueError):
        return None
    finally:
        os.close(root)
    fresh = _fresh_name(path.parent)
    try:
        os.rename(path, fresh)
    except OSError:
        return None
    return Shell(fresh, marks)


def _reset(root: int, name: str, mark: Mark) -> bool:
    folder = os.open(name, FOLDER_FLAGS, dir_fd=root)
    try:
        st = os.fstat(folder)
        if (st.st_dev, st.st_ino) != (mark.dev, mark.ino):
            return False  # not the folder that was made: the agent put another in its place
        empty_folder(folder)
        return _mark(folder) == mark
    finally:
        os.close(folder)
