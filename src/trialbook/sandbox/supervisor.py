"""The one owner of every process a trial starts, so that none of them outlives the trial.

Each trial gets a :class:`TrialScope`: a fresh marker (``TRIALBOOK_TRIAL=<hex>``) that the sandbox puts in
the environment of everything the trial runs (agent, shims, literal steps, script agents, ``succeeds``
commands), and, where the kernel allows, a cgroup v2 group of its own. While any trial runs, trialbook is
a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so a daemon that double-forks away from its parent is
re-parented to trialbook instead of to init. When the trial ends (finished, timed out or cancelled)
:meth:`TrialScope.close` kills the group, then, until nothing is left, every process in the session of a
command the trial started, or that carries the marker, or descends from one of those (see :mod:`._sweep`),
and reaps what it killed that had become trialbook's child (a marked process started outside
:func:`run_process` and killed here is reaped here too, so its starter sees it already gone). A sweep
reads only the processes started since the trial's last sweep (:mod:`._pidcursor`), so it costs tens of
microseconds when nothing is left, not a read of every process on the machine.

A trial's end always sweeps, whatever its last look found: a pass costs far less than the trial did,
and a shortcut that skips it would be one more argument for why nothing could have survived.

Which mechanism ran is :attr:`TrialScope.mechanism`: ``cgroup`` (group plus marker sweep),
``marker`` (marker and process-tree sweep through ``/proc``) or ``process-group`` (no ``/proc``, as on
macOS: only the process group of each started command is killed).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import shutil
import signal
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from .._util.owner import owner_gone, owner_tag
from ._cgroup import CgroupRoot, find_cgroup_root
from ._pidcursor import Cursor, cursor, span
from ._procfs import boot_ticks, clock_agrees, has_procfs, processes
from ._sweep import Criteria, Swept, kill_until_clean, reap

__all__ = ["TRIAL_MARKER", "Supervisor", "TrialScope", "supervisor"]

TRIAL_MARKER = "TRIALBOOK_TRIAL"
"""The environment variable that tags every process of one trial."""

_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _set_subreaper(on: bool) -> bool:
    libc = _libc() if sys.platform.startswith("linux") else None
    try:
        return libc is not None and int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except AttributeError:
        return False


def _start() -> tuple[Cursor | None, int | None, str]:
    """A new trial's pid cursor, the boot time its marker is made at, and the marker.

    Read before anything of the trial starts: no process older than these can be the trial's. The owner
    tag comes first in the marker, so a later run can tell processes of a killed trialbook run by it.
    """
    return cursor(), boot_ticks(), f"{owner_tag()}-{os.urandom(16).hex()}"


class TrialScope:
    """One trial's processes: its marker, its cgroup (if any) and the commands it started."""

    def __init__(
        self,
        owner: Supervisor,
        group: Path | None,
        join: Path | None = None,
        *,
        start: tuple[Cursor | None, int | None, str] | None = None,
    ) -> None:
        # Before anything of the trial starts: no process older than these can be the trial's.
        origin, opened, marker = start if start is not None else _start()
        self.origin: Cursor | None = origin
        self.opened = opened
        """When the marker was made; no process that started earlier can carry it."""
        self.marker = marker
        self.group = group
        self.join = join
        """The file a command writes ``0`` to, to enter the group (see :meth:`CgroupRoot.join_file`)."""
        self.mechanism = "cgroup" if group else "marker" if has_procfs() else "process-group"
        self.leaders: set[int] = set()
        """Commands started and not yet waited for."""
        self.sessions: set[int] = set()
        """Every command started: each leads a session of its own, whose id is its pid."""
        self.reaped: dict[int, int | None] = {}
        """When each waited-for command's status was collected (boot ticks; ``None``: unknown)."""
        self.swept: Cursor | None = self.origin
        """Up to here every process was looked at by a sweep and none alive is the trial's."""
        self._stray: set[int] = set()
        self._owner = owner
        self._closed = False

    @property
    def killed(self) -> int:
        """How many of the trial's processes a sweep still found alive and killed, each counted once.

        The same whichever mechanism did the killing: the members of the trial's cgroup are counted
        before ``cgroup.kill`` ends them, and the sweeps (the trial's own, and a CLI adapter's sweep of
        the same marker) add the processes they kill.
        """
        return len(self._stray)

    def credit(self, pids: set[int]) -> None:
        """Count these processes as the trial's strays (a sweep of its marker killed them)."""
        self._stray |= pids

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with this trial's marker, which no setting of the eval can override."""
        return {**env, TRIAL_MARKER: self.marker}

    def trusts_sessions(self, now: Cursor | None) -> bool:
        """Whether a session id still names one of this trial's sessions: no pid was handed out twice.

        A session's id stays taken while any member lives; once it is empty, a pid that wrapped around
        could found a new session with the same id.
        """
        return self.origin is not None and now is not None and span(self.origin, now) is not None

    def held_sessions(self) -> dict[int, int | None]:
        """Sessions whose members are the trial's even where pids may have been handed out twice.

        A session's id is held, so no new session can take it, while its leader is unreaped or any
        member lives: a session reborn under the same id began after its command was reaped. So a
        process in one of these sessions is the trial's if it started before that (the value, in boot
        ticks, less one tick for rounding), or at any time while the command is not reaped yet (``None``).
        """
        held: dict[int, int | None] = dict.fromkeys(self.leaders)
        if clock_agrees():
            held.update((pid, at - 1) for pid, at in self.reaped.items() if at is not None)
        return held

    def sweep(self) -> int:
        """Kill and reap what the trial still runs, keeping the scope open for the commands still to come."""
        before, members = self.killed, set[int]()
        if self.group is not None:
            self.credit(CgroupRoot.kill(self.group, remove=False, members=members))
        self._owner.sweep(self, members)
        return self.killed - before

    def close(self) -> int:
        """Kill and reap every process of the trial, then end the scope; returns how many were alive."""
        if self._closed:
            return 0
        self._closed = True
        try:
            return self.sweep()
        finally:
            # Always: a scope left open would keep trialbook a subreaper for the rest of its life.
            self._owner.release(self)


class Supervisor:
    """Process-wide registry of open trial scopes; use :func:`supervisor` for the shared one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._scopes: dict[str, TrialScope] = {}
        self._leaders: set[int] = set()
        self._cgroups: CgroupRoot | None = None
        self.subreaper = False

    def open_trial(self) -> TrialScope:
        """A new scope; the first one makes trialbook a subreaper and its folder of cgroups."""
        # Read outside the lock: a worker thread giving a scope back waits for it, and so would the
        # event loop, while these reads wait for the interpreter lock behind that worker.
        start = _start()
        with self._lock:
            if not self._scopes:
                self.subreaper = _set_subreaper(True)
                self._cgroups = find_cgroup_root()
            group = self._cgroups.new_group() if self._cgroups is not None else None
            join = self._cgroups.join_file(group) if self._cgroups is not None and group else None
            scope = TrialScope(self, group, join, start=start)
            self._scopes[scope.marker] = scope
            return scope

    def release(self, scope: TrialScope) -> None:
        """Forget a closed scope; after the last one, stop being a subreaper and remove the cgroup folder."""
        # Whether its group is empty is read first, outside the lock: the group is this closed scope's
        # alone, and nothing of the ended trial can join it (see :meth:`CgroupRoot.give_back`).
        empty = scope.group is not None and CgroupRoot.reusable(scope.group)
        # The rest under the lock: a trial opening meanwhile (scopes close in worker threads) must find
        # either the old state or the new one, never its fresh cgroup folder removed under it.
        with self._lock:
            self._scopes.pop(scope.marker, None)
            if scope.group is not None and self._cgroups is not None:
                self._cgroups.give_back(scope.group, empty=empty)  # the root stays while any is open
            if self._scopes:
                return
            cgroups, self._cgroups = self._cgroups, None
            if cgroups is not None:
                cgroups.close()
            if self.subreaper:
                self.subreaper = not _set_subreaper(False)

    def prepare(self, argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
        """The argv to start: inside the trial's cgroup when the environment names a scope that has one."""
        scope = self._scopes.get(env.get(TRIAL_MARKER, ""))
        if scope is None or scope.join is None or not argv:
            return list(argv)
        joined = CgroupRoot.join_argv(scope.join, list(argv), env)
        # A prologue in front: a missing program would be its exit 127, so such a command is started as
        # is, and stays an OSError. A shell that moves itself is the program started: nothing to look up.
        if joined[0] != argv[0] and shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
            return list(argv)
        return joined

    def started(self, pid: int, env: Mapping[str, str]) -> None:
        """Note a command trialbook started in a session of its own (and waits for itself).

        Its tree, and its session, are the trial's too.
        """
        with self._lock:
            self._leaders.add(pid)
            scope = self._scopes.get(env.get(TRIAL_MARKER, ""))
            if scope is not None:
                scope.leaders.add(pid)
                scope.sessions.add(pid)

    def waited(self, pid: int) -> None:
        """The command's exit status was collected by whoever started it."""
        with self._lock:
            self._leaders.discard(pid)
            for scope in self._scopes.values():
                scope.leaders.discard(pid)
                if pid in scope.sessions:
                    scope.reaped[pid] = boot_ticks()

    def kill_orphaned(self) -> int:
        """Kill the trial processes of trialbook runs that are gone (killed with ``kill -9``)."""
        if not has_procfs():
            return 0
        markers = {
            entry.marker
            for entry in processes(TRIAL_MARKER)
            if entry.marker and entry.state != "Z" and owner_gone(entry.marker.partition("-")[0])
        }
        return self.kill(markers, set()) if markers else 0

    def kill_everything(self) -> int:
        """Kill every open trial's processes at once (a second signal); scopes stay open for their owners."""
        with self._lock:
            scopes = list(self._scopes.values())
        for scope in scopes:
            if scope.group is not None:
                CgroupRoot.kill(scope.group, wait_s=0.5)
        with self._lock:
            leaders = {pid for scope in scopes for pid in scope.leaders}
        return self.kill({scope.marker for scope in scopes}, leaders)

    def sweep(self, scope: TrialScope, members: Collection[int] = ()) -> None:
        """The trial's own sweep: afterwards, later sweeps need look only at processes started since.

        ``members``: what its cgroup held as it was killed, reaped like what the sweep finds.
        """
        with self._lock:
            leaders = set(scope.leaders)
        self._kill({scope.marker}, leaders, advance=scope, members=members)

    def kill(self, markers: set[str], roots: set[int], *, since: int | None = None) -> int:
        """SIGKILL, until none is left, every process of the trials ``markers`` name (see :mod:`._sweep`).

        ``roots`` (commands trialbook started) count as trial processes while they are still its
        children. Killing repeats because a dying process's children are re-parented and a forking one
        makes new ones; it ends when a full pass finds nobody alive. Markers of open scopes are swept
        with what their scopes know (sessions, where their last sweep ended); others (a killed run's)
        through every process started since ``since`` (boot ticks; ``None``: every process).
        """
        swept = self._kill(markers, roots, since=since)
        return len(swept.killed) if swept is not None else 0

    def _kill(
        self,
        markers: set[str],
        roots: set[int],
        *,
        since: int | None = None,
        advance: TrialScope | None = None,
        members: Collection[int] = (),
    ) -> Swept | None:
        """The sweep; ``None`` where there is no ``/proc``."""
        if not has_procfs():
            for pid in roots:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            return None
        with self._lock:  # copies: commands of other trials start meanwhile, on the event loop
            scopes = [self._scopes[m] for m in markers if m in self._scopes]
            sessions = [(scope, frozenset(scope.sessions)) for scope in scopes]
            held = {pid: at for scope in scopes for pid, at in scope.held_sessions().items()}
            others = [(s, frozenset(s.sessions)) for s in self._scopes.values() if s.marker not in markers]
            # Other trials' commands not waited for yet: each pid is still its command's (started with
            # that trial's marker, in a session of its own, a child of trialbook), so no pass reads it.
            known = {pid for s, _ in others for pid in s.leaders} - roots
        start: Cursor | None = None
        if scopes and len(scopes) == len(markers):  # every marker is an open trial's
            marks = [scope.swept for scope in scopes if scope.swept is not None]
            start = min(marks, key=lambda mark: mark.forks) if len(marks) == len(scopes) else None
            opened = [scope.opened for scope in scopes if scope.opened is not None]
            since = min(opened) if len(opened) == len(scopes) else None

        def criteria(now: Cursor | None) -> Criteria:
            mine = {pid for scope, ids in sessions if scope.trusts_sessions(now) for pid in ids}
            theirs = {pid for scope, ids in others if scope.trusts_sessions(now) for pid in ids}
            return Criteria(TRIAL_MARKER, markers, roots, mine, theirs, held)

        swept = kill_until_clean(start, since, criteria, skip=known)
        if advance is not None and swept.clean is not None:
            advance.swept = swept.clean
        with self._lock:
            # Only what this sweep killed, and not the commands whose starters collect their status
            # themselves: a zombie child trialbook did not kill may be one that other code in the
            # process (a test's Popen, a user's fixture) is about to wait for, and its status is theirs.
            # What it killed includes the processes that became trialbook's children only as the
            # parents it killed with them died (trialbook is their subreaper): left, each would stay
            # a zombie for the rest of the run, and every later pass would read it.
            ours = (swept.ours | swept.seen | set(members)) - self._leaders
        reap(ours)
        if len(markers) == 1 and swept.killed:
            # One trial's marker (its own sweep, or a CLI adapter's): its processes, for its count.
            with self._lock:
                scope = self._scopes.get(next(iter(markers)))
            if scope is not None:
                scope.credit(swept.killed)
        return swept


_SUPERVISOR = Supervisor()


def supervisor() -> Supervisor:
    """The supervisor of this trialbook process."""
    return _SUPERVISOR
