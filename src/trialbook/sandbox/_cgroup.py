"""Per-trial cgroup v2 groups, where the kernel lets trialbook make them (root, or a delegated subtree).

A cgroup is the one container a process cannot leave by itself: ``setsid``, double forks and a cleared
environment all stay inside, and ``cgroup.kill`` ends every member at once. It is used when trialbook's
own cgroup (from ``/proc/self/cgroup``) on the cgroup2 mount is writable; otherwise nothing here is used
and the supervisor's marker-and-tree sweep does the whole job. ``TRIALBOOK_CGROUP=off`` turns it off.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

from ._procfs import start_time

__all__ = ["CgroupRoot", "find_cgroup_root", "sweep_stale_roots"]

_JOIN = 'echo 0 >"$0/cgroup.procs" 2>/dev/null; exec "$@"'
"""A ``sh`` prologue that moves itself into the trial's group, then becomes the real command."""


def _cgroup2_mount() -> Path | None:
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return Path(left.split()[4])
    return None


def _own_cgroup() -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            return line[3:].strip()
    return None


class CgroupRoot:
    """A folder of trial groups made for this trialbook process inside its own cgroup."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def new_group(self) -> Path | None:
        """A fresh empty group for one trial, or ``None`` when the kernel refuses it."""
        group = self.path / f"trial-{uuid.uuid4().hex[:12]}"
        try:
            group.mkdir()
        except OSError:
            return None
        return group

    @staticmethod
    def join_argv(group: Path, argv: list[str]) -> list[str]:
        """``argv`` prefixed so the process enters ``group`` before it runs (no ``preexec_fn`` needed)."""
        return ["/bin/sh", "-c", _JOIN, str(group), *argv]

    @staticmethod
    def kill(group: Path, wait_s: float = 2.0, *, remove: bool = True) -> set[int]:
        """Kill every member of ``group``, wait until it is empty, and (with ``remove``) remove it.

        Returns the members that were alive when it looked, before anything was killed: ``cgroup.kill``
        ends them all at once, so afterwards nobody is left to count.
        """
        procs = group / "cgroup.procs"
        kill_file = group / "cgroup.kill"
        deadline = time.monotonic() + wait_s
        found: set[int] = set()
        while True:
            try:
                members = procs.read_text(encoding="ascii").split()
            except OSError:
                members = []
            found.update(int(pid) for pid in members if pid.isdigit() and start_time(int(pid)) is not None)
            if not members or time.monotonic() > deadline:
                break
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1", encoding="ascii")
            else:  # kernels before 5.14: one by one
                for pid in members:
                    with contextlib.suppress(OSError, ValueError):
                        os.kill(int(pid), 9)
            time.sleep(0.01)
        if remove:
            with contextlib.suppress(OSError):
                group.rmdir()
        return found

    def close(self) -> None:
        """Remove the folder of groups (each trial removed its own already)."""
        with contextlib.suppress(OSError):
            for child in self.path.iterdir():
                if child.is_dir():
                    self.kill(child, wait_s=0.5)
            self.path.rmdir()


def _base() -> Path | None:
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        return None
    return mount / own.lstrip("/")


def sweep_stale_roots() -> list[Path]:
    """Kill what is left in, and remove, the trial groups of trialbook processes that are gone."""
    base = _base()
    removed: list[Path] = []
    if base is None:
        return removed
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            name = entry.name
            if not name.startswith("trialbook-") or not name[10:].isdigit():
                continue
            try:
                os.kill(int(name[10:]), 0)
                continue  # its process still runs
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            CgroupRoot(entry).close()
            if not entry.exists():
                removed.append(entry)
    return removed


def find_cgroup_root() -> CgroupRoot | None:
    """Make this process's folder of trial groups when cgroup v2 allows it; ``None`` otherwise."""
    if os.environ.get("TRIALBOOK_CGROUP", "").lower() in {"0", "off", "no", "false"}:
        return None
    base = _base()
    if base is None:
        return None
    if not os.access(base / "cgroup.procs", os.W_OK):
        return None
    path = base / f"trialbook-{os.getpid()}"
    try:
        path.mkdir(exist_ok=True)
    except OSError:
        return None
    if not os.access(path / "cgroup.procs", os.W_OK):
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return CgroupRoot(path)
