"""Durable file writes: a reader sees the old file or the whole new one, never a half-written one.

Every write goes to a temp file in the same folder and is renamed over its target, so a reader (or a
``kill -9`` mid-write) never sees a part of a file. Each write is also fsynced, so the file survives a
power loss, except inside a folder registered with :func:`sync_later`: a run's staging folder, whose
hundreds of per-trial files are made durable together by one :func:`sync_folder` just before the
folder is renamed into place. Until then the folder is a ``.partial`` that nobody reads and a later run
sweeps; a per-file fsync there bought nothing but a journal commit per file, and a new file there is
written in place (:func:`write_staged`): a temp file and a rename per file bought nothing either.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import stat
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from .owner import OWNER_PATTERN, owner_gone, owner_tag

__all__ = [
    "NAME_MAX",
    "NotDurableError",
    "abandoned_temp_files",
    "atomic_symlink",
    "atomic_write_bytes",
    "atomic_write_text",
    "needs_sync",
    "sync_directory",
    "sync_folder",
    "sync_later",
    "write_staged",
]


class NotDurableError(OSError):
    """The new file is in place, but the folder's fsync failed: the rename may not survive a power loss."""

    @property
    def reason(self) -> str:
        """The system's words for the error alone: the message may name a temp or staging path."""
        return os.strerror(self.errno) if self.errno else str(self)


_T = TypeVar("_T")

_LATER: set[str] = set()
_LATER_LOCK = threading.Lock()


def sync_later(folder: Path, on: bool = True) -> None:
    """Let writes inside ``folder`` skip their own fsync (``on``), or make them sync again."""
    key = os.path.abspath(folder)
    with _LATER_LOCK:
        if on:
            _LATER.add(key)
        else:
            _LATER.discard(key)


def needs_sync(path: Path) -> bool:
    """Whether a write to ``path`` must fsync itself: it is in no folder given to :func:`sync_later`."""
    if not _LATER:
        return True
    where = os.path.abspath(path)
    return not any(where.startswith(folder + os.sep) for folder in tuple(_LATER))


_CANNOT_SYNC = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.ENOSYS})
"""Errors that say a file or filesystem cannot be synced at all, not that a write was lost."""


def _fsync_path(path: str | Path, flags: int, failed: str) -> None:
    """Fsync one file or folder; one that cannot be opened (gone, a platform without folder fds) is skipped.

    Raises:
        NotDurableError: the fsync reported a write error (``EIO``, ``ENOSPC``, ...); ``failed`` says
            what that means.
    """
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _CANNOT_SYNC:
            raise NotDurableError(exc.errno, f"{failed}: {exc.strerror}") from exc
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    """Fsync ``folder``; a filesystem that cannot sync folders is skipped.

    Raises:
        NotDurableError: the fsync itself failed (an I/O error): a rename into it may not be durable.
    """
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    _fsync_path(folder, flags, "could not make the rename durable")


def sync_directory(folder: Path, *, strict: bool = False) -> None:
    """Make the names in ``folder`` durable (a rename into it).

    Best effort unless ``strict``: then a failed fsync raises :class:`NotDurableError`.
    """
    if strict:
        _fsync_folder(folder)
        return
    with contextlib.suppress(OSError):
        _fsync_folder(folder)


def _syncfs_errno(fd: int) -> int | None:
    """Linux ``syncfs(2)`` on the filesystem holding ``fd``: 0, the error number, or ``None`` if not here."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if int(libc.syncfs(fd)) == 0:
            return 0
    except (OSError, AttributeError):
        return None
    return ctypes.get_errno()


def _syncfs(folder: Path) -> bool:
    """Flush the whole filesystem holding ``folder`` in one call; ``False`` where there is no ``syncfs``.

    Since Linux 5.8 ``syncfs`` reports a write-back error of any file on the filesystem, as ``fsync``
    does for one file: such an error is raised, never taken for a missing ``syncfs``.

    Raises:
        NotDurableError: the flush reported a write error (``EIO``, ``ENOSPC``, ...).
    """
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return False
    try:
        code = _syncfs_errno(fd)
    finally:
        os.close(fd)
    if code is None or code in _CANNOT_SYNC:
        return False
    if code:
        raise NotDurableError(code, f"could not write {folder} to disk: {os.strerror(code)}")
    return True


def sync_folder(folder: Path) -> None:
    """Make all under ``folder`` durable: one ``syncfs`` on Linux, else an fsync per file and folder.

    Raises:
        NotDurableError: the disk reported a write error for something under ``folder`` (with ``syncfs``:
            for anything on its filesystem); the files are as written, but may not survive a crash.
    """
    if _syncfs(folder):
        return
    for root, _dirs, names in os.walk(folder):
        for name in names:
            file = os.path.join(root, name)
            _fsync_path(file, os.O_RDONLY, f"could not write {file} to disk")
        sync_directory(Path(root), strict=True)


def write_staged(path: Path, data: bytes, *, make_parents: bool = True) -> bool:
    """Write a new file inside a :func:`sync_later` folder directly, with no temp file and no rename.

    Nobody reads such a folder before it is published whole (see the module docstring), so the temp
    file and the rename buy nothing there: the file is created (never replacing one), written and
    closed, and removed again if writing fails. ``False``, with nothing done, when ``path`` is outside
    such a folder or exists already: the caller writes it the atomic way. With ``make_parents`` false,
    a missing folder is an error (``FileNotFoundError``) rather than made.
    """
    if needs_sync(path):
        return False
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o666)
    except FileExistsError:
        return False
    except FileNotFoundError:
        if not make_parents:
            raise
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, flags, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise
    os.close(fd)
    return True


NAME_MAX = 255
"""The longest file name, in bytes, on the filesystems trialbook writes to (ext4, XFS, Btrfs, tmpfs, APFS)."""


def _temp_beside(path: Path) -> Path:
    """A hidden temp name beside ``path``, tagged with this process (see :mod:`trialbook.sandbox.leftovers`).

    The owner tag lets a later run or ``trialbook clean`` tell an abandoned temp file (its process
    killed between write and rename) from one still being written, and remove only the former. The
    target's name is shortened in the temp name when the whole would not fit in ``NAME_MAX`` bytes, so
    any file the filesystem can hold can be written (a file masked in place above all).
    """
    tail = f".{owner_tag()}.{os.urandom(4).hex()}.tmp"
    head = os.fsencode(f".{path.name}")[: NAME_MAX - len(tail)]
    return path.with_name(os.fsdecode(head) + tail)


def _make_beside(path: Path, make: Callable[[Path], _T]) -> tuple[Path, _T]:
    """``make`` a temp file or link beside ``path``, drawing another name if one is taken already.

    Another thread of this process may have drawn the same name a moment before.
    """
    for _ in range(100):
        tmp = _temp_beside(path)
        try:
            return tmp, make(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temp name beside {path}")


def _open_new(tmp: Path) -> int:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    return os.open(tmp, flags, 0o666)


_TEMP_NAME = re.compile(rf"\..+\.{OWNER_PATTERN}\.[A-Za-z0-9_]+\.tmp", re.DOTALL)  # names may hold newlines


def abandoned_temp_files(folder: Path) -> list[Path]:
    """The temp files (and temp links) of writes in ``folder`` whose process is gone, killed mid-write.

    Those of a process still running, and names without an owner tag (other tools'), are never listed.
    """
    try:
        with os.scandir(folder) as found:
            entries = list(found)
    except OSError:
        return []
    abandoned = []
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if match is None or not (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
            continue
        if owner_gone(f"{match['pid']}_{match['start']}"):
            abandoned.append(Path(entry.path))
    return abandoned


def atomic_write_bytes(path: Path, data: bytes, *, make_parents: bool = True) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder, fsync, then rename over it.

    This is trialbook's one durable write: every file a reader may find (evidence, transcripts, HTML
    and JUnit reports, ``ci.json``, ``latest``) goes through it. A new file inside a run's staging
    folder is written directly instead (see :func:`write_staged`). A new file's mode follows the umask,
    as an ordinary file's would; a replaced file keeps its mode. With ``make_parents`` false, a missing
    folder is an error (``FileNotFoundError``) rather than made.

    Raises:
        NotDurableError: the file was replaced, but the folder's fsync failed.
        OSError: nothing was written; the old file at ``path`` (if any) is unchanged and no temp file
            is left.
    """
    if write_staged(path, data, make_parents=make_parents):
        return
    if make_parents:
        path.parent.mkdir(parents=True, exist_ok=True)
    sync = needs_sync(path)
    tmp, fd = _make_beside(path, _open_new)
    try:
        try:
            with contextlib.suppress(FileNotFoundError):
                existing = os.stat(path)
                if stat.S_ISREG(existing.st_mode):
                    os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if sync:
        _fsync_folder(path.parent)


def atomic_symlink(link: Path, target: str) -> bool:
    """Point the symbolic link ``link`` at ``target`` atomically: a tagged temp link renamed over it.

    ``False``, with nothing done, where a symbolic link cannot be made (the caller picks another way).

    Raises:
        OSError: the rename failed; ``link`` is unchanged and no temp link is left.
    """
    try:
        tmp, _ = _make_beside(link, lambda tmp: os.symlink(target, tmp, target_is_directory=True))
    except FileExistsError:
        raise  # no free temp name: not a platform without links
    except OSError:
        return False
    try:
        os.replace(tmp, link)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if needs_sync(link):
        _fsync_folder(link.parent)
    return True


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))
