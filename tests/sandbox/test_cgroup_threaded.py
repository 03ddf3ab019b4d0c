"""Trial groups as a threaded subtree: cheap joins, and everything still ends, counts once and goes home.

Real cgroup v2 on this machine. trialbook moves itself into its folder's threaded ``runner`` group so
that each command can enter its trial's group by moving its one thread (no machine-wide lock, no RCU
grace period). These tests attack what that changes: a threaded group refuses ``cgroup.kill``, so a
fork storm must still end; a frozen group must not freeze the next trial; a process with many threads
counts once; trialbook, and what it started outside trials, go back to their cgroup when the run ends;
and the folder of a trialbook killed with ``kill -9`` is cleaned up without killing what was not a trial's.
A run of a few trials makes no threaded subtree: trialbook stays where it was.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.sandbox.procs import open_cgroup_scope, read_pids, run_in_trial, running, wait_gone
from trialbook.sandbox import _cgroup as cgroup_module
from trialbook.sandbox._cgroup import sweep_stale_roots
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TrialScope

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")


def _cgroup(pid: int | str = "self") -> str:
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return next(line[3:] for line in lines if line.startswith("0::"))


@pytest.fixture(autouse=True)
def cgroups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")


def _open() -> TrialScope:
    scope = open_cgroup_scope()
    assert scope.join is not None and scope.join.name == "cgroup.threads", "this machine allows threads"
    return scope


def test_trialbook_and_what_it_started_outside_trials_go_home_when_the_run_ends(tmp_path: Path) -> None:
    home = _cgroup()
    scope = _open()
    assert scope.group is not None
    folder = scope.group.parent
    assert _cgroup() == f"{home.rstrip('/')}/{folder.name}/runner"
    # A command of the trial is in the trial's group; a process started outside any trial is not.
    run_in_trial(scope, f"grep ^0:: /proc/self/cgroup > {tmp_path / 'where'}", tmp_path)
    assert (tmp_path / "where").read_text().strip().endswith(f"/{folder.name}/{scope.group.name}")
    bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        assert _cgroup(bystander.pid).endswith("/runner")
        assert scope.close() == 0
        assert _cgroup() == home
        assert running(bystander.pid), "not a trial's process: it must not be killed"
        assert _cgroup(bystander.pid) == home
        assert not folder.exists()
    finally:
        bystander.kill()
        bystander.wait()


def test_a_fork_storm_in_a_threaded_group_ends_and_leaves_the_group_unfrozen(
    holder: TrialScope, tmp_path: Path
) -> None:
    first = _open()
    assert first.group is not None
    group = first.group
    # The kernel refuses cgroup.kill here: the kill goes one by one, in a frozen group.
    with pytest.raises(OSError, match="not supported"):
        (group / "cgroup.kill").write_text("1")
    pids = tmp_path / "pids"
    storm = f"setsid -f bash -c 'echo $$ >> {pids}; while :; do (sleep 300 &); done' >/dev/null 2>&1"
    run_in_trial(first, f"{storm}\nuntil [ -s {pids} ]; do sleep 0.01; done\nsleep 0.2", tmp_path)
    (forker,) = read_pids(pids)
    assert first.close() >= 1
    assert wait_gone([forker]) == []
    assert (group / "cgroup.threads").read_text().split() == []

    second = _open()
    try:
        assert second.group == group  # handed on
        assert (group / "cgroup.freeze").read_text().strip() == "0"
        run_in_trial(second, f"echo ran > {tmp_path / 'ran'}", tmp_path)  # would hang in a frozen group
        assert (tmp_path / "ran").read_text() == "ran\n"
    finally:
        second.close()


def test_a_process_with_many_threads_counts_once(holder: TrialScope, tmp_path: Path) -> None:
    scope = _open()
    pids = tmp_path / "pids"
    threads = textwrap.dedent(
        f"""
        import os, threading, time
        for _ in range(4):
            threading.Thread(target=time.sleep, args=(300,), daemon=True).start()
        open({str(pids)!r}, "w").write(str(os.getpid()))
        time.sleep(300)
        """
    )
    script = (
        f"setsid -f {sys.executable} -c {shlex.quote(threads)} >/dev/null 2>&1\n"
        f"until [ -s {pids} ]; do sleep 0.01; done"
    )
    run_in_trial(scope, script, tmp_path)
    (pid,) = read_pids(pids)
    assert scope.group is not None
    assert len((scope.group / "cgroup.threads").read_text().split()) == 5
    assert scope.close() == 1
    assert wait_gone([pid]) == []


def test_the_folder_of_a_killed_trialbook_kills_its_trials_and_sends_the_rest_home(tmp_path: Path) -> None:
    home = _cgroup()
    out = tmp_path / "pids"
    child = textwrap.dedent(
        f"""
        import asyncio, os, subprocess
        from trialbook.sandbox import run_process
        from trialbook.sandbox.supervisor import supervisor
        scope = supervisor().open_trial()
        assert scope.join is not None and scope.join.name == "cgroup.threads"
        bystander = subprocess.Popen(["sleep", "300"], start_new_session=True)
        stray = "{tmp_path}/stray"
        script = f"setsid -f sh -c 'echo $$ > {{stray}}; exec sleep 300'; "
        script += f"until [ -s {{stray}} ]; do sleep 0.01; done"
        env = scope.env(dict(PATH="/usr/bin:/bin"))
        asyncio.run(run_process(["bash", "-c", script], cwd={str(tmp_path)!r}, env=env, timeout_s=60))
        with open({str(out)!r}, "w") as f:
            f.write(f"{{bystander.pid}}\\n")
        os.kill(os.getpid(), 9)
        """
    )
    env = {**os.environ, "TRIALBOOK_CGROUP": "on"}
    killed = subprocess.Popen([sys.executable, "-c", child], env=env)
    assert killed.wait(timeout=60) == -signal.SIGKILL
    (bystander,) = read_pids(out)
    (stray,) = read_pids(tmp_path / "stray")
    try:
        folder = f"trialbook-{killed.pid}"
        assert _cgroup(bystander).endswith(f"/{folder}/runner")
        assert f"/{folder}/trial-" in _cgroup(stray)
        assert folder in [path.name for path in sweep_stale_roots()]
        assert wait_gone([stray]) == []
        assert running(bystander), "not a trial's process: it must not be killed"
        assert _cgroup(bystander) == home
    finally:
        for pid in (bystander, stray):
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_where_the_kernel_refuses_a_threaded_subtree_trialbook_stays_home_and_commands_move_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Domain groups, joined through ``cgroup.procs``: a trial's escapee still ends with the trial."""
    monkeypatch.setattr(cgroup_module, "_enter_runner", lambda _path: False)
    home = _cgroup()
    scope = open_cgroup_scope()
    assert scope.group is not None and scope.join is not None
    try:
        assert scope.join.name == "cgroup.procs"
        assert _cgroup() == home, "trialbook did not move"
        assert not (scope.group.parent / "runner").exists()
        run_in_trial(scope, f"grep ^0:: /proc/self/cgroup > {tmp_path / 'where'}", tmp_path)
        where = (tmp_path / "where").read_text().strip()
        assert where.endswith(f"/{scope.group.parent.name}/{scope.group.name}")
        assert (scope.group / "cgroup.type").read_text().strip() == "domain"
        pids = tmp_path / "pids"
        escape = f"setsid -f bash -c 'echo $$ >> {pids}; exec sleep 300' >/dev/null 2>&1"
        run_in_trial(scope, f"{escape}\nuntil [ -s {pids} ]; do sleep 0.01; done", tmp_path)
        escapee = read_pids(pids)
        assert escapee and all(running(pid) for pid in escapee)
        assert set(escapee) <= {int(pid) for pid in (scope.group / "cgroup.procs").read_text().split()}
    finally:
        scope.close()
    assert wait_gone(escapee) == []
    assert _cgroup() == home
    assert not scope.group.parent.exists()
