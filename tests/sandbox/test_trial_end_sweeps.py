"""The end of a trial always sweeps again, and that sweep finds what appeared after the first one.

A trial is swept (or looked at) after its agent and again when it ends. Each test here leaves a process
of the trial that the first pass could not see: one forked while the pass looked, one a later command
left under a pid an earlier command had, one an agent running inside trialbook started by itself, and a
command still running where there is no ``/proc`` to sweep.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, running, wait_gone
from trialbook.sandbox import _sweep, run_process
from trialbook.sandbox import supervisor as supervisor_module
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TrialScope, supervisor

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

ENV = {"PATH": "/usr/bin:/bin"}


def _passes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the sweeps' passes over the process table."""
    calls: list[int] = []
    listing = _sweep.table

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return listing(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_sweep, "table", counted)
    return calls


def _marked_sleeper(scope: TrialScope, pids: Path) -> subprocess.Popen[bytes]:
    """A marked process in a session of its own that trialbook did not start through ``run_process``."""
    return subprocess.Popen(
        ["setsid", "-f", "sh", "-c", f"echo $$ >> {pids}; exec sleep 300"], env=scope.env(ENV)
    )


def _wait_pids(pids: Path) -> list[int]:
    for _ in range(500):
        if pids.exists() and pids.read_text().strip():
            return read_pids(pids)
        time.sleep(0.01)
    raise AssertionError("the sleeper never wrote its pid")


def test_a_trial_whose_pass_found_nothing_is_swept_again_at_its_end(
    scope: TrialScope, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcome = asyncio.run(
        run_process(["bash", "-c", "echo ok > out.txt"], cwd=tmp_path, env=scope.env(ENV), timeout_s=60)
    )
    assert outcome.returncode == 0
    assert scope.sweep() == 0
    passes = _passes(monkeypatch)
    assert scope.close() == 0
    assert passes != []


@pytest.mark.parametrize("when", ["after the listing", "between the cursor and the listing"])
def test_a_process_forked_while_the_pass_looks_is_killed_when_the_trial_ends(
    scope: TrialScope, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    """Its pid is past the cursor the pass read, and its parent is gone before the pass reads that.

    Forked after the pass read how far the pids went, before or after it listed them: only the last
    pid, read again as the pass ends, tells.
    """
    # The agent, a command: else no pass settles the trial whatever the machine does.
    outcome = asyncio.run(run_process(["true"], cwd=tmp_path, env=scope.env(ENV), timeout_s=60))
    assert outcome.returncode == 0
    pids = tmp_path / "pids"
    name = "table" if when == "after the listing" else "cursor"
    real = getattr(_sweep, name)
    started: list[subprocess.Popen[bytes]] = []

    def forking(*args: object, **kwargs: object) -> object:
        read = real(*args, **kwargs)
        if not started:  # once: as a trial's process would fork right then
            started.append(_marked_sleeper(scope, pids))
            started[0].wait()  # ``setsid -f`` returns at once: the parent is gone, the sleeper runs
        return read

    monkeypatch.setattr(_sweep, name, forking)
    assert scope.sweep() == 0  # the pass did not see it
    (sleeper,) = _wait_pids(pids)
    assert running(sleeper)
    monkeypatch.setattr(_sweep, name, real)
    assert scope.close() == 1
    assert wait_gone([sleeper]) == []
    assert scope.killed == 1


def test_what_a_command_under_an_earlier_commands_pid_left_is_killed_at_the_end(
    scope: TrialScope, tmp_path: Path
) -> None:
    """Pids are handed out again: a second command under the first one's pid is still the trial's."""
    first = subprocess.Popen(["true"], env=scope.env(ENV), start_new_session=True)
    owner = supervisor()
    owner.started(first.pid, scope.env(ENV))
    first.wait()
    owner.waited(first.pid)
    assert scope.sweep() == 0
    # A later command that left a marked process behind, under the pid the first command had.
    pids = tmp_path / "pids"
    second = _marked_sleeper(scope, pids)
    owner.started(first.pid, scope.env(ENV))
    second.wait()
    owner.waited(first.pid)
    (sleeper,) = _wait_pids(pids)
    assert scope.close() == 1
    assert wait_gone([sleeper]) == []


@pytest.mark.parametrize("agent", ["no command", "commands in its own thread"])
def test_what_an_agent_running_inside_trialbook_starts_after_the_sweep_is_killed_at_the_end(
    scope: TrialScope, tmp_path: Path, agent: str
) -> None:
    """A plain Python function agent past its timeout keeps running in its thread, starting processes.

    Nothing counts what it starts with ``subprocess``, whether it started no command through trialbook
    or ran some on an event loop of its own: the end's sweep finds it by its marker.
    """
    if agent == "commands in its own thread":

        def command() -> None:
            asyncio.run(run_process(["true"], cwd=tmp_path, env=scope.env(ENV), timeout_s=60))

        thread = threading.Thread(target=command)
        thread.start()
        thread.join()
    for _ in range(5):
        assert scope.sweep() == 0
    pids = tmp_path / "pids"
    late = threading.Thread(target=lambda: _marked_sleeper(scope, pids).wait())
    late.start()
    late.join()
    (sleeper,) = _wait_pids(pids)
    assert scope.close() == 1
    assert wait_gone([sleeper]) == []


def test_without_proc_a_command_still_running_at_the_end_is_killed_with_its_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The process-group mechanism (macOS): each unreaped command's group ends with the trial."""
    monkeypatch.setattr(supervisor_module, "has_procfs", lambda: False)
    monkeypatch.setenv("TRIALBOOK_CGROUP", "off")
    owner = supervisor()
    scope = owner.open_trial()
    pids = tmp_path / "pids"
    started: list[subprocess.Popen[bytes]] = []
    try:
        assert scope.mechanism == "process-group"
        for _ in range(2):  # one before the trial's sweep, one after it, both running at the end
            started.append(
                subprocess.Popen(
                    ["sh", "-c", f"sh -c 'echo $$ >> {pids}; exec sleep 300' & wait"],
                    env=scope.env(ENV),
                    start_new_session=True,
                )
            )
            owner.started(started[-1].pid, scope.env(ENV))
            if len(started) == 1:
                read = _wait_pids(pids)
                assert scope.sweep() == 0  # the group is killed; without /proc nothing is counted
                assert started[0].wait(timeout=10) == -signal.SIGKILL
                owner.waited(started[0].pid)
                assert wait_gone(read) == []
        while len(read_pids(pids)) < 2:
            time.sleep(0.01)
        scope.close()
        assert started[1].wait(timeout=10) == -signal.SIGKILL
        assert wait_gone(read_pids(pids)) == []
    finally:
        scope.close()
        for process in started:
            owner.waited(process.pid)
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
