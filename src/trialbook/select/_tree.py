"""Content hashes of sandbox templates, so a changed template file changes the cache key."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from ..errors import ConfigError
from ..sandbox import TemplateFilter, special_kind

__all__ = ["tree_hash"]


def tree_hash(root: Path, keep: TemplateFilter | None = None) -> str:
    """A tagged SHA-256 over every entry under ``root``: relative path, kind, executable bit and content.

    Symlinks hash their target text, not what they point to, matching how templates are copied. Entries
    the filter leaves out of the copy (``.git``, ``.trialbook``, ``sandbox.exclude``) are left out here too.

    Raises:
        ConfigError: the template holds a special file (a FIFO, socket or device); it is never opened,
            since opening a FIFO waits for a writer that never comes.
    """
    keep = keep or TemplateFilter()
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        prefix = "" if base == root else base.relative_to(root).as_posix() + "/"
        dirnames[:] = sorted(d for d in dirnames if not keep.excluded(prefix + d, is_dir=True))
        for name in sorted(filenames + [d for d in dirnames if (base / d).is_symlink()]):
            path = base / name
            rel = path.relative_to(root).as_posix()
            if keep.excluded(rel, is_dir=False):
                continue
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                digest.update(f"L {rel}\0{os.readlink(path)}\0".encode())
                continue
            kind = special_kind(info.st_mode)
            if kind is not None:
                raise ConfigError(
                    f"{path}: the sandbox template holds {kind}; keep only files, folders and symlinks there"
                )
            executable = "x" if info.st_mode & 0o111 else "-"
            digest.update(f"F {rel} {executable}\0".encode())
            with open(path, "rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
    return f"sha256:{digest.hexdigest()}"
