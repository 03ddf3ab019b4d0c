"""A trial's cgroup serves the next trial only when it is empty, and every group goes with the last trial.

Real cgroup v2 groups (this machine delegates them): a trial that left processes in its group hands it on
empty, so the next trial finds nothing of the last one in it and counts nothing it did not start; a group
that a process joined after the trial's end was killed is never handed out again, and the process is
killed when the run's last trial ends and the folder of groups is removed.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import pytest

from tests.sandbox.procs import open_cgroup_scope, read_pids, running, wait_gone
from trialbook.sandbox import run_process
from trialbook.sandbox._cgroup import CgroupRoot
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TrialScope

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture(autouse=True)
def cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")


def _members(group: Path) -> list[int]:
    return [int(pid) for pid in (group / "cgroup.threads").read_text().split()]


_open = open_cgroup_scope


def _leave_behind(scope: TrialScope, pids: Path, cwd: Path) -> int:
    """Run a command in the trial that leaves a sleep in the trial's group, in a session of its own."""
    script = (
        f"setsid -f sh -c 'echo $$ >> {pids}; exec sleep 300' >/dev/null 2>&1\n"
        f"until [ -s {pids} ]; do sleep 0.01; done"
    )
    outcome = asyncio.run(run_process(["bash", "-c", script], cwd=cwd, env=scope.env(ENV), timeout_s=60))
    assert outcome.returncode == 0, outcome.stderr
    (pid,) = read_pids(pids)
    return pid


def test_the_next_trial_gets_the_ended_trials_group_empty(holder: TrialScope, tmp_path: Path) -> None:
    first = _open()
    assert first.group is not None
    stray = _leave_behind(first, tmp_path / "first", tmp_path)
    assert stray in _members(first.group)
    assert first.close() == 1
    assert wait_gone([stray]) == []

    second = _open()
    try:
        assert second.group == first.group  # handed on, not removed and made again
        assert _members(second.group) == []
        assert second.sweep() == 0 and second.killed == 0  # nothing of the first trial counts here
        # And it holds the second trial's processes as it held the first's.
        late = _leave_behind(second, tmp_path / "second", tmp_path)
        assert late in _members(second.group)
        assert second.close() == 1
        assert wait_gone([late]) == []
    finally:
        second.close()


def test_a_group_joined_after_the_trials_end_is_never_handed_out_again(
    holder: TrialScope, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _open()
    assert first.group is not None
    group = first.group
    joiner = tmp_path / "joiner"
    kill = CgroupRoot.kill
    joined: list[subprocess.Popen[bytes]] = []

    def kill_then_join(
        group: Path, wait_s: float = 2.0, *, remove: bool = True, members: set[int] | None = None
    ) -> set[int]:
        found = kill(group, wait_s, remove=remove, members=members)
        # A process that enters the group after the kill, as a command still starting would.
        joined.append(
            subprocess.Popen(
                ["sh", "-c", f"echo $$ > {group}/cgroup.procs && echo $$ > {joiner} && exec sleep 300"],
                start_new_session=True,
            )
        )
        while not joiner.exists() or not joiner.read_text().strip():
            time.sleep(0.01)
        return found

    with monkeypatch.context() as patched:
        patched.setattr(CgroupRoot, "kill", staticmethod(kill_then_join))
        first.close()
    (late,) = read_pids(joiner)
    try:
        assert _members(group) == [late]
        second = _open()
        try:
            assert second.group != group
            assert second.group is not None and _members(second.group) == []
        finally:
            second.close()
        assert running(late)  # not the second trial's to kill
    finally:
        for process in joined:
            process.kill()
            process.wait()


def test_the_groups_kept_for_reuse_and_a_leftover_go_with_the_last_trial(tmp_path: Path) -> None:
    first, second = _open(), _open()
    assert first.group is not None and second.group is not None
    folder = first.group.parent
    stray = _leave_behind(second, tmp_path / "pids", tmp_path)
    assert first.close() == 0
    assert folder.exists() and first.group.exists()  # kept for a next trial while the run goes on
    # A process that entered the first group after its trial ended, alive when the run's last trial ends.
    joiner = subprocess.Popen(
        ["sh", "-c", f"echo $$ > {first.group}/cgroup.procs && exec sleep 300"], start_new_session=True
    )
    try:
        while joiner.pid not in _members(first.group):
            time.sleep(0.01)
        assert second.close() == 1
        assert wait_gone([stray]) == []
        assert joiner.wait(timeout=10) < 0  # killed when the folder of groups was removed
        assert not folder.exists()
    finally:
        if joiner.poll() is None:
            joiner.kill()
            joiner.wait()
