"""The processes started since a moment, found by the kernel's pid cursor instead of by reading them all.

Linux hands out pids in increasing order and wraps around at ``pid_max``. A :class:`Cursor` notes the last
pid handed out (``/proc/loadavg``) and how many forks the machine has made (``/proc/stat``). Later, if the
pids have not wrapped around meanwhile, every process started since has a pid above the old one, so only
those few pids are read, not every process on the machine (two reads each, tens of microseconds, on a
machine with hundreds of processes). Whether they wrapped is told by the forks: going round once takes at
least ``pid_max`` minus the pids in use. Where that cannot be ruled out (or the files are missing),
:func:`young` says so and the caller reads every process as before.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from ._procfs import ProcEntry, entry, read_proc

__all__ = ["Cursor", "cursor", "forks", "last_pid", "span", "young"]

_PROBE_LIMIT = 32
"""Up to this many new pids are read one by one; more, and one listing of ``/proc`` is cheaper."""


@dataclass(frozen=True)
class Cursor:
    """The kernel's pid cursor at one moment: the last pid handed out and the forks made so far."""

    last_pid: int
    forks: int


@functools.cache
def _pid_max() -> int | None:
    try:
        return int(read_proc("/proc/sys/kernel/pid_max"))
    except (OSError, ValueError):
        return None


def forks() -> int | None:
    """How many processes and threads the machine has made since boot; ``None`` where not shown."""
    try:
        stat = read_proc("/proc/stat")
        at = stat.index(b"\nprocesses ") + len(b"\nprocesses ")
        return int(stat[at : stat.index(b"\n", at)])
    except (OSError, ValueError):
        return None


def _loadavg() -> tuple[int, int] | None:
    """``(tasks on the machine, last pid handed out)`` from ``/proc/loadavg``."""
    try:
        fields = read_proc("/proc/loadavg").split()
        return int(fields[3].partition(b"/")[2]), int(fields[4])
    except (OSError, ValueError, IndexError):
        return None


def last_pid() -> int | None:
    """The last pid handed out in this pid namespace (``/proc/loadavg``); ``None`` where not shown.

    Every new process or thread takes a pid here, one made in a nested namespace included, so two equal
    readings a moment apart say that nothing was made in between: going round all ``pid_max`` pids in
    that moment is out of reach. Less than half the cost of reading the fork count in ``/proc/stat``.
    """
    load = _loadavg()
    return None if load is None else load[1]


def cursor(*, before: bool = True) -> Cursor | None:
    """The pid cursor now; ``None`` where the kernel does not show it.

    ``before`` reads the fork count first (a cursor a later reading is compared against), otherwise last
    (the later reading): either way the difference in forks counts every pid handed out in between, so a
    wrap-around is never hidden by the order of the two reads.
    """
    made = forks() if before else None
    load = _loadavg()
    if not before:
        made = forks()
    if load is None or made is None:
        return None
    tasks, last = load
    limit = _pid_max()
    # Each task holds at most three pids (its own, its group's, its session's); far from the limit, a
    # wrap-around cannot hide in pids that are in use.
    if limit is None or 3 * tasks >= limit // 2:
        return None
    return Cursor(last, made)


def span(start: Cursor, now: Cursor) -> range | None:
    """The pids handed out between two readings, or ``None`` when they may have wrapped around.

    Going round once hands out at least ``pid_max - 300 - in use`` pids (the first 300 are skipped after a
    wrap); with fewer than half in use, more forks than ``(now - start) + pid_max / 2 - 300`` are needed.
    """
    limit = _pid_max()
    if limit is None or now.last_pid < start.last_pid:
        return None
    if now.forks - start.forks > (now.last_pid - start.last_pid) + limit // 2 - 300:
        return None
    return range(start.last_pid + 1, now.last_pid + 1)


def young(pids: range, skip: Collection[int] = frozenset()) -> list[ProcEntry]:
    """The live or zombie processes (not threads, not kernel threads) whose pid is in ``pids``.

    Pids in ``skip`` are left unread: processes the caller knows already (see ``Supervisor._kill``).
    """
    if len(pids) <= _PROBE_LIMIT:
        candidates: Iterable[int] = pids
    else:
        try:
            names = os.listdir("/proc")
        except OSError:
            names = []
        candidates = sorted(int(name) for name in names if name.isdigit() and int(name) in pids)
    me = os.getpid()
    found = []
    for pid in candidates:
        if pid != me and pid not in skip and (found_entry := entry(pid)) is not None:
            found.append(found_entry)
    return found
