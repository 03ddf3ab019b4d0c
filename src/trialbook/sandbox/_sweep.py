"""One pass of a sweep: which processes belong to the trials being swept, and waiting for killed ones.

A process belongs to a trial when it is in the session of a command the trial started (each starts its
own, and a session is left only by ``setsid``), carries the trial's marker (inherited across ``setsid``,
double forks and new groups), is a command the trial started, or descends from any of those. Only
processes started since the sweep's starting point are read (:mod:`._pidcursor`); where that cannot be
told, every process started since the oldest trial began (see :func:`~._procfs.processes`).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

from ._pidcursor import Cursor, cursor, span, young
from ._procfs import ProcEntry, dying, environ_value, marker, mid_exec, processes, read_proc

__all__ = ["Criteria", "Swept", "doomed", "kill_until_clean", "reap", "table", "wait_exit"]

_MAX_ROUNDS = 200
_KILLED_WAIT_S = 1.0
"""How long one pass waits for the processes it killed to exit before it looks again."""


@dataclass
class Criteria:
    """What makes a process one of the swept trials'."""

    variable: str
    markers: Collection[str]
    roots: Collection[int] = ()
    """Commands trialbook started: theirs while they are still trialbook's children."""
    sessions: Collection[int] = ()
    """The sessions of commands the trials started (a session id is its first process's pid)."""
    foreign: Collection[int] = field(default_factory=set)
    """Sessions of other trials still running: their processes are theirs, with no need to read them."""
    held: Mapping[int, int | None] = field(default_factory=dict)
    """Sessions of the trials' commands whose members started before a moment (boot ticks; ``None``:
    any time) are the trials', even where ``sessions`` cannot be trusted (see ``held_sessions``)."""


def table(
    start: Cursor | None, since: int | None, skip: Collection[int] = frozenset()
) -> tuple[list[ProcEntry], Cursor | None, bool]:
    """The processes started after ``start``, the cursor now, and whether the pid cursor was enough.

    When it was not (no cursor, or the pids may have wrapped around), every process started since
    ``since`` (boot ticks; ``None`` for all) is listed instead. Through the cursor, pids in ``skip``
    are not read (see :func:`kill_until_clean`).
    """
    now = cursor(before=False)
    pids = span(start, now) if start is not None and now is not None else None
    if pids is not None:
        return young(pids, skip), now, True
    return list(processes(None, since=since)), now, False


def doomed(entries: Iterable[ProcEntry], criteria: Criteria) -> set[int]:
    """The pids among ``entries`` that belong to the swept trials, with everything descending from them.

    Environments are read last and only for processes that neither session, start nor ancestry place:
    a trial's commands and their children are placed without opening a file.
    """
    me = os.getpid()
    entries = list(entries)
    children: dict[int, list[int]] = {}
    for entry in entries:
        children.setdefault(entry.ppid, []).append(entry.pid)
    found: set[int] = set()

    def take(seeds: Iterable[int]) -> None:
        pending = list(seeds)
        while pending:
            pid = pending.pop()
            if pid not in found:
                found.add(pid)
                pending.extend(children.get(pid, ()))

    take(
        entry.pid
        for entry in entries
        if entry.session in criteria.sessions
        or (entry.pid in criteria.roots and entry.ppid == me)
        or _held(entry, criteria.held)
    )
    if criteria.markers:
        take(
            entry.pid
            for entry in entries
            if entry.pid not in found
            and entry.session not in criteria.foreign
            and entry.ppid not in (0, 2)  # kernel threads: reading their environment can stall
            and marker(entry.pid, criteria.variable) in criteria.markers
        )
    return found


def _unsettled(pid: int, criteria: Criteria) -> bool:
    """Whether a process this pass did not take may still be one of the swept trials'.

    It may be inside ``execve`` (its environment not readable yet), or it may have finished its exec
    since this pass read its marker: then its environment shows one of the trials' markers now.
    """
    try:
        environ = read_proc(f"/proc/{pid}/environ")  # once, for both questions
    except OSError:
        return False
    if not environ:
        return mid_exec(pid, environ)
    return bool(criteria.markers) and environ_value(environ, criteria.variable) in criteria.markers


def _held(entry: ProcEntry, held: Mapping[int, int | None]) -> bool:
    if entry.session is None or entry.session not in held:
        return False
    before = held[entry.session]
    return before is None or (entry.started is not None and entry.started < before)


def wait_exit(pids: Collection[int], timeout_s: float) -> None:
    """Wait (at most ``timeout_s``) until each of ``pids`` has exited: is a zombie or gone."""
    fds: list[int] = []
    try:
        for pid in pids:
            try:
                fds.append(os.pidfd_open(pid))
            except ProcessLookupError:
                continue
            except (OSError, AttributeError):  # no pidfd (kernel before 5.3, not Linux): a short pause
                time.sleep(min(timeout_s, 0.005))
                return
        deadline = time.monotonic() + timeout_s
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        waiting = len(fds)
        while waiting and (left := deadline - time.monotonic()) > 0:
            for fd, _ in poller.poll(left * 1000):
                poller.unregister(fd)
                waiting -= 1
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


@dataclass
class Swept:
    """What :func:`kill_until_clean` did."""

    killed: set[int]
    """The processes it found alive and killed that were not already dying (see :func:`~._procfs.dying`)."""
    ours: set[int]
    """Of the trials' processes seen, those that are trialbook's children (to reap)."""
    clean: Cursor | None
    """The cursor of the pass that found nobody alive: everything up to it was looked at."""
    seen: set[int] = field(default_factory=set)
    """Every process any pass placed as the trials', alive or not (reaped where trialbook's child)."""


def kill_until_clean(
    start: Cursor | None,
    since: int | None,
    criteria: Callable[[Cursor | None], Criteria],
    *,
    skip: Collection[int] = frozenset(),
) -> Swept:
    """SIGKILL the trials' processes until a full pass finds none of them alive.

    Killing repeats because a dying process's children are re-parented and a forking one makes new ones;
    between passes it waits for the killed ones to exit, so a pass never sees them dying. ``skip``: pids
    the pid cursor's passes need not read, each a process known to be no swept trial's: another trial's
    command, not waited for yet, so its pid is still its own.
    """
    me = os.getpid()
    swept = Swept(set(), set(), None)
    for _ in range(_MAX_ROUNDS):
        entries, now, _ = table(start, since, skip)
        judged = criteria(now)
        found = doomed(entries, judged)
        swept.seen |= found
        alive = {e.pid for e in entries if e.pid in found and e.state != "Z"}
        swept.ours.update(e.pid for e in entries if e.pid in found and e.ppid == me)
        if not alive:
            # A process in another running trial's session is that trial's, whatever it carries
            # (no process can join a session it did not start): whether it is mid-exec does not matter.
            settling = (
                e
                for e in entries
                if e.pid not in found
                and e.state != "Z"
                and 2 not in (e.pid, e.ppid)
                and e.session not in judged.foreign
            )
            if any(e.ppid != 0 and _unsettled(e.pid, judged) for e in settling):
                # Its environment was not readable yet when this pass read it: look again.
                time.sleep(0.001)
                continue
            swept.clean = now
            break
        # Read before this pass's own kill: one already dying (its group was killed with its command)
        # is waited for like the rest but is no stray.
        swept.killed |= {pid for pid in alive if not dying(pid)}
        for pid in alive:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        wait_exit(alive, _KILLED_WAIT_S)
    return swept


def reap(pids: set[int], timeout_s: float = 2.0) -> None:
    """Collect the exit status of these children of trialbook, waiting for each to exit (bounded)."""
    pids = set(pids)
    deadline = time.monotonic() + timeout_s
    while pids:
        for pid in list(pids):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                pids.discard(pid)
        left = deadline - time.monotonic()
        if not pids or left <= 0:
            break
        wait_exit(pids, min(left, 0.1))
