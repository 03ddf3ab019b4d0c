"""Process checks shared by the sandbox and agent tests: is a pid still a running process?"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import time
from pathlib import Path

from trialbook.sandbox import run_process
from trialbook.sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor


def running(pid: int) -> bool:
    """True while ``pid`` is a live process; a zombie waiting to be reaped counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # The state letter follows the parenthesised command name, which may itself hold spaces.
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


GONE_S = 30.0
"""How long a killed process may take to end before a test counts it as a survivor: the test's own
bound, far past what a busy machine needs (the wait ends the moment the processes have)."""


def wait_gone(pids: list[int], timeout_s: float = GONE_S) -> list[int]:
    """Wait until every pid has ended (a killed process needs a moment); return those still running.

    Each is watched through a pidfd, which becomes readable the moment its process ends: no bound but
    the test's. Where a test took pidfds away, a short poll stands in.
    """
    fds: dict[int, int] = {}
    try:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                try:
                    fds[os.pidfd_open(pid)] = pid
                except OSError:
                    break
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout_s
        waiting = {pid for pid in pids if running(pid)}
        while waiting and (left := deadline - time.monotonic()) > 0:
            # A zombie's pidfd is readable too: what it says is checked again with running().
            for fd, _ in poller.poll(min(left, 0.01 if len(fds) < len(pids) else left) * 1000):
                poller.unregister(fd)
            waiting = {pid for pid in waiting if running(pid)}
        return [pid for pid in pids if pid in waiting]
    finally:
        for fd in fds:
            os.close(fd)


def read_pids(path: Path) -> list[int]:
    """The pids a test script wrote to ``path``, one a line."""
    return [int(line) for line in path.read_text().split()]


def run_in_trial(scope: TrialScope, script: str, cwd: Path) -> None:
    """Run ``script`` with ``bash -c`` as one of the trial's commands; it must exit 0 within a minute."""
    env = {"PATH": "/usr/bin:/bin", TRIAL_MARKER: scope.marker}
    outcome = asyncio.run(run_process(["bash", "-c", script], cwd=cwd, env=env, timeout_s=60))
    assert outcome.returncode == 0, outcome.stderr


def open_cgroup_scope() -> TrialScope:
    """A new trial scope that has a cgroup of its own (``TRIALBOOK_CGROUP=on`` is the caller's)."""
    scope = supervisor().open_trial()
    assert scope.mechanism == "cgroup" and scope.group is not None
    return scope
