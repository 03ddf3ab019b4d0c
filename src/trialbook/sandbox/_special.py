"""Special files (FIFOs, sockets, devices) have no place in a sandbox template.

Opening a FIFO blocks until someone writes to it, reading a device may never end, and neither can be
copied into a fresh sandbox. The eval loader refuses a template holding one, and the code that hashes and
copies templates checks each entry's kind before opening it, so a special file that appears after
loading still ends in a clear error rather than a hang.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

__all__ = ["SpecialFileError", "find_special_files", "refuse_special", "special_kind"]


class SpecialFileError(OSError):
    """A special file where only files, folders and symlinks may be."""


_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def special_kind(mode: int) -> str | None:
    """The kind of special file ``mode`` (from ``lstat``) is, or ``None`` for files, folders and links."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None


def find_special_files(
    root: Path, limit: int = 5, *, skip: Callable[[str, bool], bool] | None = None
) -> list[tuple[str, str]]:
    """Up to ``limit`` special files under ``root`` as ``(relative path, kind)``, in a stable order.

    Only ``lstat`` is used, and symlinks are not followed, so the walk itself never blocks. ``skip``
    (relative path, is a folder) leaves out entries that are never copied, such as ``.git``.
    """
    found: list[tuple[str, str]] = []
    pending = [root]
    while pending and len(found) < limit:
        folder = pending.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if skip is not None and skip(Path(entry.path).relative_to(root).as_posix(), stat.S_ISDIR(mode)):
                continue
            if stat.S_ISDIR(mode):
                pending.append(Path(entry.path))
            elif (kind := special_kind(mode)) is not None:
                found.append((Path(entry.path).relative_to(root).as_posix(), kind))
    return sorted(found)[:limit]


def refuse_special(path: Path) -> None:
    """Raise :class:`SpecialFileError` when ``path`` (not followed if a symlink) is a special file."""
    kind = special_kind(os.lstat(path).st_mode)
    if kind is not None:
        raise SpecialFileError(
            f"{path} is {kind}; a sandbox template may hold only files, folders and symlinks"
        )
