"""Sweeping what a killed trialbook run left: trial processes, sandboxes, temp files of writes, cgroups.

``kill -9``, a crashed runner or a second signal leave ``trialbook-*`` folders in the temp folder and
hidden ``.<name>.<owner>.<random>.tmp`` files beside the files being replaced. Their names carry the
owner tag of the process that made them (see :mod:`trialbook._util.owner`), so a sweep removes exactly those
whose owner is gone and never touches what a running trialbook process still uses. Trial processes
carry the tag in their marker (``TRIALBOOK_TRIAL``), so those of a dead run are killed first. Names
without a tag (older versions, other tools) are left alone.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .._util.fsutil import abandoned_temp_files
from .._util.owner import OWNER_PATTERN, owner_gone, temp_prefix
from ._cgroup import sweep_stale_roots
from ._sandbox import remove_tree
from .supervisor import supervisor

__all__ = ["Swept", "sweep", "temp_prefix"]

_FOLDER = re.compile(rf"trialbook-{OWNER_PATTERN}-.*")


@dataclass
class Swept:
    """What a sweep removed, and what it could not remove (with the reason)."""

    removed: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    processes_killed: int = 0


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as found:
            return list(found)
    except OSError:
        return []


def sweep(*, temp_roots: Iterable[Path] = (), file_folders: Iterable[Path] = ()) -> Swept:
    """Remove abandoned sandboxes and temp files; returns what was removed.

    Sandboxes are looked for in ``temp_roots`` (the system temp folder is always one), temp files of
    interrupted writes in ``file_folders``; the cgroups of ended trialbook processes are emptied too.
    """
    swept = Swept()
    # Processes first, so none of them writes into a folder while it is removed.
    swept.processes_killed = supervisor().kill_orphaned()
    roots = {Path(tempfile.gettempdir()).resolve(), *(Path(root).resolve() for root in temp_roots)}
    for root in sorted(roots):
        for entry in _entries(root):
            match = _FOLDER.fullmatch(entry.name)
            if match is None or not entry.is_dir(follow_symlinks=False):
                continue
            if owner_gone(f"{match['pid']}_{match['start']}"):
                _remove(Path(entry.path), swept, folder=True)
    for folder in sorted({Path(folder).resolve() for folder in file_folders}):
        for path in abandoned_temp_files(folder):
            _remove(path, swept, folder=False)
    swept.removed.extend(sweep_stale_roots())
    return swept


def _remove(path: Path, swept: Swept, *, folder: bool) -> None:
    try:
        if folder:
            remove_tree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError as exc:
        swept.problems.append(f"{path}: could not remove it ({exc.strerror or exc})")
        return
    swept.removed.append(path)
