"""Template copies at the filesystem's speed: reflinks where it has them, a kernel-side copy where not.

Every trial gets its own copy of the template, so the copy is on every trial's path. On a filesystem
with reflinks (Btrfs, XFS, bcachefs, APFS-like copy-on-write filesystems on Linux) a file is cloned with
one ``ioctl(FICLONE)``: no data is read or written, and a write in one sandbox copies only the blocks it
touches, so no other trial (nor the template) ever sees it. Whether reflinks work is found out by the
first file cloned, once per pair of filesystems (source device, sandbox device) per process, and
remembered; where they do not, files are copied in the kernel (``copy_file_range``, else ``sendfile``).
Either way a file keeps its mode, times and extended attributes, a symlink stays a symlink, a folder
keeps its mode and times, and a special file (FIFO, socket, device) is refused without being opened.

:func:`copy_tree` says which way the tree went: ``reflink`` when every file was cloned, ``copy`` when
any file was copied (a template without files is ``copy``: nothing showed reflinks at work).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from ._special import SpecialFileError, special_kind

__all__ = ["FICLONE", "CopyMethod", "copy_tree", "reflink_support"]

CopyMethod = Literal["reflink", "copy"]

FICLONE = 0x40049409
"""``_IOW(0x94, 9, int)``: clone the whole of one file into another (Linux 4.5+)."""

_UNSUPPORTED = frozenset({errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS})
"""What ``FICLONE`` fails with where the filesystem (or the pair of them) cannot clone at all."""

_SUPPORT: dict[tuple[int, int], bool] = {}
_LOCK = threading.Lock()

Kept = Callable[[str, bool], bool]


def reflink_support(source_dev: int, target_dev: int) -> bool | None:
    """What copies from ``source_dev`` to ``target_dev`` found: reflinks work, do not, or not tried yet."""
    with _LOCK:
        return _SUPPORT.get((source_dev, target_dev))


def _remember(pair: tuple[int, int], works: bool) -> None:
    with _LOCK:
        _SUPPORT.setdefault(pair, works)


_HAS_RANGE = hasattr(os, "copy_file_range")


def _kernel_copy(src: int, dst: int, size: int) -> None:
    copied = 0
    use_range = _HAS_RANGE
    while copied < size or size == 0:
        try:
            if use_range:
                sent = os.copy_file_range(src, dst, 1 << 30)
            else:
                sent = os.sendfile(dst, src, None, 1 << 30)
        except OSError as exc:
            if use_range and exc.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
                use_range = False  # older kernels, or filesystems that refuse it: sendfile does the rest
                continue
            raise
        if sent == 0:
            return
        copied += sent


def _copy_xattrs(src: int, dst: int) -> None:
    try:
        names = os.listxattr(src)
    except OSError:
        return
    for name in names:
        try:
            os.setxattr(dst, name, os.getxattr(src, name))
        except OSError:
            continue  # security.* and trusted.* need privileges a copy does not require (as cp -a)


def _copy_file(source: str, target: str, target_dev: int) -> bool:
    """Copy one regular file with its mode, times and extended attributes; ``True`` when it was cloned.

    What is copied is what was opened: mode, times and size come from the open file (a file swapped in
    since the listing is the one whose content, mode and times the copy gets, or refused).
    """
    # O_NONBLOCK: a FIFO put in place of the file since it was listed must not block the open.
    src = os.open(source, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        now = os.fstat(src)
        if not stat.S_ISREG(now.st_mode):
            kind = special_kind(now.st_mode)
            raise SpecialFileError(
                f"{source} is {kind or 'not a file'}; a sandbox template may hold only files"
            )
        mode = stat.S_IMODE(now.st_mode)
        # Created with its final mode: one inode update fewer than a chmod afterwards, where the umask
        # leaves the mode as it is (checked below).
        dst = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, mode & 0o777)
        try:
            pair = (now.st_dev, target_dev)
            cloned = False
            if reflink_support(*pair) is not False:
                try:
                    fcntl.ioctl(dst, FICLONE, src)
                    cloned = True
                    _remember(pair, True)
                except OSError as exc:
                    if exc.errno in _UNSUPPORTED:
                        _remember(pair, False)
            if not cloned:
                _kernel_copy(src, dst, now.st_size)
            _copy_xattrs(src, dst)
            if stat.S_IMODE(os.fstat(dst).st_mode) != mode:
                os.fchmod(dst, mode)
            os.utime(dst, ns=(now.st_atime_ns, now.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)
    return cloned


def copy_tree(template: Path, workdir: Path, kept: Kept) -> CopyMethod:
    """Copy ``template`` to a new ``workdir``, leaving out what ``kept(relative, is_dir)`` refuses.

    Raises:
        SpecialFileError: the template holds a FIFO, socket or device (it is never opened).
        OSError: a file could not be read or written (the caller removes the half-made sandbox).
    """
    os.mkdir(workdir)
    target_dev = os.stat(workdir).st_dev
    folders: list[tuple[str, os.stat_result]] = [(str(workdir), os.stat(template))]
    pending: list[tuple[str, str, str]] = [(str(template), str(workdir), "")]
    files = cloned = 0
    while pending:
        source_dir, target_dir, prefix = pending.pop()
        with os.scandir(source_dir) as entries:
            listed = list(entries)
        for entry in listed:
            relative = prefix + entry.name
            is_dir = entry.is_dir(follow_symlinks=False)
            if not kept(relative, is_dir):
                continue
            target = f"{target_dir}/{entry.name}"
            if not is_dir and entry.is_file(follow_symlinks=False):
                # The listing says a regular file: the open file's fstat gives its mode, times and size.
                files += 1
                cloned += _copy_file(entry.path, target, target_dev)
                continue
            info = entry.stat(follow_symlinks=False)
            if is_dir:
                os.mkdir(target, 0o700)
                folders.append((target, info))
                pending.append((entry.path, target, relative + "/"))
            elif stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(entry.path), target)
                os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)
            elif stat.S_ISREG(info.st_mode):  # a listing that did not say what the entry is
                files += 1
                cloned += _copy_file(entry.path, target, target_dev)
            else:
                kind = special_kind(info.st_mode) or "not a file"
                raise SpecialFileError(
                    f"{entry.path} is {kind}; a sandbox template may hold only files, folders and symlinks"
                )
    # Folders last, deepest first: creating their entries changed their times, and a read-only folder
    # must get its mode only once nothing more is written into it.
    for folder, info in reversed(folders):
        os.chmod(folder, stat.S_IMODE(info.st_mode))
        os.utime(folder, ns=(info.st_atime_ns, info.st_mtime_ns))
    return "reflink" if files and cloned == files else "copy"
