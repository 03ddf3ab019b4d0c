"""Durable file writes: a reader sees the old file or the whole new one, never a half-written one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ._owner import owner_tag

__all__ = ["atomic_write_bytes", "atomic_write_text"]


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temp file in the same folder, fsync, then rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # The owner tag lets a later run tell an abandoned temp file (its process killed) from one in use.
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{owner_tag()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))
