"""The one owner of every process a trial starts, so that none of them outlives the trial.

Each trial gets a :class:`TrialScope`: a fresh marker (``TRIALBOOK_TRIAL=<hex>``) that the sandbox puts in
the environment of everything the trial runs (agent, shims, literal steps, script agents, ``succeeds``
commands), and, where the kernel allows, a cgroup v2 group of its own. While any trial runs, trialbook is
a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``), so a daemon that double-forks away from its parent is
re-parented to trialbook instead of to init. When the trial ends (finished, timed out or cancelled)
:meth:`TrialScope.close` kills the group, then, until nothing is left, every process that carries the
marker or descends from one that does or from the trial's own children, and reaps what it killed
that had become trialbook's child (a marked process started outside :func:`run_process` and killed
here is reaped here too, so its starter sees it already gone).

Which mechanism ran is :attr:`TrialScope.mechanism`: ``cgroup`` (group plus marker sweep),
``marker`` (marker and process-tree sweep through ``/proc``) or ``process-group`` (no ``/proc``, as on
macOS: only the process group of each started command is killed).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import sys
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from .._owner import owner_gone, owner_tag
from ._cgroup import CgroupRoot, find_cgroup_root
from ._procfs import boot_ticks, has_procfs, processes

__all__ = ["TRIAL_MARKER", "Supervisor", "TrialScope", "supervisor"]

TRIAL_MARKER = "TRIALBOOK_TRIAL"
"""The environment variable that tags every process of one trial."""

_PR_SET_CHILD_SUBREAPER = 36
_MAX_ROUNDS = 200


def _set_subreaper(on: bool) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


class TrialScope:
    """One trial's processes: its marker, its cgroup (if any) and the commands it started."""

    def __init__(self, owner: Supervisor, group: Path | None) -> None:
        # The owner tag first: a later run can tell processes of a killed trialbook run by it.
        self.opened = boot_ticks()
        """When the marker was made; no process that started earlier can carry it."""
        self.marker = f"{owner_tag()}-{uuid.uuid4().hex}"
        self.group = group
        self.mechanism = "cgroup" if group else "marker" if has_procfs() else "process-group"
        self.leaders: set[int] = set()
        self._stray: set[int] = set()
        self._owner = owner
        self._closed = False

    @property
    def killed(self) -> int:
        """How many of the trial's processes a sweep still found alive and killed, each counted once.

        The same whichever mechanism did the killing: the members of the trial's cgroup are counted
        before ``cgroup.kill`` ends them, and the marker sweeps (the trial's own, and a CLI adapter's
        sweep of the same marker) add the processes they kill.
        """
        return len(self._stray)

    def credit(self, pids: set[int]) -> None:
        """Count these processes as the trial's strays (a sweep of its marker killed them)."""
        self._stray |= pids

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` with this trial's marker, which no setting of the eval can override."""
        return {**env, TRIAL_MARKER: self.marker}

    def sweep(self) -> int:
        """Kill and reap what the trial still runs, keeping the scope open for the commands still to come."""
        before = self.killed
        if self.group is not None:
            self.credit(CgroupRoot.kill(self.group, remove=False))
        self._owner.kill({self.marker}, set(self.leaders), since=self.opened)
        return self.killed - before

    def close(self) -> int:
        """Kill and reap every process of the trial, then end the scope; returns how many were alive."""
        if self._closed:
            return 0
        self._closed = True
        before = self.killed
        try:
            if self.group is not None:
                self.credit(CgroupRoot.kill(self.group))
            self._owner.kill({self.marker}, set(self.leaders), since=self.opened)
        finally:
            # Always: a scope left open would keep trialbook a subreaper for the rest of its life.
            self._owner.release(self)
        return self.killed - before


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
        with self._lock:
            if not self._scopes:
                self.subreaper = _set_subreaper(True)
                self._cgroups = find_cgroup_root()
            group = self._cgroups.new_group() if self._cgroups is not None else None
            scope = TrialScope(self, group)
            self._scopes[scope.marker] = scope
            return scope

    def release(self, scope: TrialScope) -> None:
        """Forget a closed scope; after the last one, reap stray zombies and stop being a subreaper."""
        # All under the lock: a trial opening meanwhile (scopes close in worker threads) must find
        # either the old state or the new one, never its fresh cgroup folder removed under it.
        with self._lock:
            self._scopes.pop(scope.marker, None)
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
        if scope is None or scope.group is None or not argv:
            return list(argv)
        if shutil.which(argv[0], path=env.get("PATH", os.defpath)) is None:
            return list(argv)  # started as is, so a missing program is still an OSError, not exit 127
        return CgroupRoot.join_argv(scope.group, list(argv))

    def started(self, pid: int, env: Mapping[str, str]) -> None:
        """Note a command trialbook started (and waits for itself): its tree is the trial's too."""
        with self._lock:
            self._leaders.add(pid)
            scope = self._scopes.get(env.get(TRIAL_MARKER, ""))
            if scope is not None:
                scope.leaders.add(pid)

    def waited(self, pid: int) -> None:
        """The command's exit status was collected by whoever started it."""
        with self._lock:
            self._leaders.discard(pid)
            for scope in self._scopes.values():
                scope.leaders.discard(pid)

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
        leaders = {pid for scope in scopes for pid in scope.leaders}
        opened = [scope.opened for scope in scopes]
        since = min((o for o in opened if o is not None), default=None) if None not in opened else None
        return self.kill({scope.marker for scope in scopes}, leaders, since=since)

    def kill(self, markers: set[str], roots: set[int], *, since: int | None = None) -> int:
        """SIGKILL, until none is left, every process carrying one of ``markers`` or descending from them.

        ``roots`` (commands trialbook started) count as trial processes while they are still its
        children. Killing repeats because a dying process's children are re-parented and a forking one
        makes new ones; it ends when a full pass finds nobody alive. ``since`` is when the oldest of
        ``markers``' scopes was opened: every process they could catch started later (see
        :func:`processes`); ``None`` lists every process on the machine.
        """
        if not has_procfs():
            for pid in roots:
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
            return 0
        me = os.getpid()
        killed: set[int] = set()
        ours: set[int] = set()
        for _ in range(_MAX_ROUNDS):
            table = list(processes(TRIAL_MARKER, since=since))
            children: dict[int, list[int]] = {}
            for entry in table:
                children.setdefault(entry.ppid, []).append(entry.pid)
            pending = [e.pid for e in table if e.marker in markers]
            pending += [e.pid for e in table if e.pid in roots and e.ppid == me]
            doomed: set[int] = set()
            while pending:
                pid = pending.pop()
                if pid not in doomed:
                    doomed.add(pid)
                    pending.extend(children.get(pid, ()))
            alive = [e for e in table if e.pid in doomed and e.state != "Z"]
            ours.update(e.pid for e in table if e.pid in doomed and e.ppid == me)
            if not alive:
                break
            for entry in alive:
                with contextlib.suppress(OSError):
                    os.kill(entry.pid, signal.SIGKILL)
                killed.add(entry.pid)
        self._reap(ours)
        if len(markers) == 1 and killed:
            # One trial's marker (its own sweep, or a CLI adapter's): its processes, for its count.
            with self._lock:
                scope = self._scopes.get(next(iter(markers)))
            if scope is not None:
                scope.credit(killed)
        return len(killed)

    def _reap(self, pids: set[int]) -> None:
        # Only what this sweep killed: a zombie child trialbook did not kill may be one that other code
        # in the process (a test's Popen, a user's fixture) is about to wait for, and its status is theirs.
        with self._lock:
            pids = pids - self._leaders  # their starters collect their status themselves
        deadline = time.monotonic() + 2.0
        while pids and time.monotonic() < deadline:
            for pid in list(pids):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    pids.discard(pid)
            if pids:
                time.sleep(0.005)


_SUPERVISOR = Supervisor()


def supervisor() -> Supervisor:
    """The supervisor of this trialbook process."""
    return _SUPERVISOR
