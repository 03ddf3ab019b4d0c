"""A trial's sweeps kill exactly its processes, however they left its tree, and count each once.

Real processes under a real trial scope, with both Linux mechanisms: the per-trial cgroup (this machine
offers cgroup v2) and the session-and-marker sweep alone. Each escaping process writes its own pid, and the
command waits until all have, so the sweep always has something to find.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, running, wait_gone
from tests.sandbox.procs import run_in_trial as _run
from trialbook.sandbox import _sweep, run_process
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

ENV = {"PATH": "/usr/bin:/bin"}
SLEEPER = "echo $$ >> {pids}; exec sleep 300 </dev/null >/dev/null 2>&1"
"""An escapee: it notes its pid, then lets go of the command's pipes (their end the command waits for)."""


def _wait_for(pids: Path, count: int) -> str:
    return f'until [ "$(cat {pids} 2>/dev/null | wc -l)" -ge {count} ]; do sleep 0.01; done'


def _leaves_group_and_marker(pids: Path) -> str:
    # A new process group and no marker, in the command's session still: its parent exits, so it is
    # re-parented to trialbook and neither its group nor its ancestry nor its marker names the trial.
    sleeper = SLEEPER.format(pids=pids)
    return (
        'python3 -c "import os, sys; os.setpgid(0, 0); '
        f"os.execvp('env', ['env', '-u', '{TRIAL_MARKER}', 'sh', '-c', sys.argv[1]])\" '{sleeper}' &"
    )


@pytest.mark.parametrize("listing", ["pid cursor", "every process"])
def test_every_escape_is_killed_and_counted_once(
    scope: TrialScope, tmp_path: Path, listing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if listing == "every process":  # as where the pids may have wrapped around, or in a container
        monkeypatch.setattr(_sweep, "span", lambda *_: None)
    pids = tmp_path / "pids"
    sleeper = SLEEPER.format(pids=pids)
    script = "\n".join(
        [
            f"setsid -f sh -c '{sleeper}'",  # a new session, marker kept
            f"( ( sh -c '{sleeper}' ) & )",  # a double fork: stays in the group, which ends with the command
            _leaves_group_and_marker(pids),
            _wait_for(pids, 3),
        ]
    )
    _run(scope, script, tmp_path)
    started = read_pids(pids)
    assert scope.sweep() == 2  # the double fork went with the command's group
    assert wait_gone(started) == []
    assert scope.killed == 2
    assert scope.close() == 0


def test_what_starts_after_a_sweep_is_still_found_when_the_trial_ends(
    scope: TrialScope, tmp_path: Path
) -> None:
    """A sweep moves the starting point of the next one; a later command's escapes are past it."""
    first, second = tmp_path / "first", tmp_path / "second"
    _run(scope, f"setsid -f sh -c '{SLEEPER.format(pids=first)}'; {_wait_for(first, 1)}", tmp_path)
    assert scope.sweep() == 1
    _run(scope, f"{_leaves_group_and_marker(second)}\n{_wait_for(second, 1)}", tmp_path)
    late = read_pids(second)
    assert running(late[0])
    assert scope.close() == 1
    assert wait_gone(late) == []
    assert scope.killed == 2


def test_a_cleared_environment_in_a_new_session_is_held_by_the_cgroup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No marker, no session, no living parent in the trial: only the cgroup still knows it (documented)."""
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")
    scope = supervisor().open_trial()
    try:
        assert scope.mechanism == "cgroup"
        pids = tmp_path / "pids"
        _run(
            scope,
            f"setsid -f env -i /bin/sh -c '{SLEEPER.format(pids=pids)}'; {_wait_for(pids, 1)}",
            tmp_path,
        )
        (escaped,) = read_pids(pids)
        assert TRIAL_MARKER.encode() not in Path(f"/proc/{escaped}/environ").read_bytes()
        assert scope.sweep() == 1
        assert wait_gone([escaped]) == []
    finally:
        scope.close()


def test_another_trials_processes_are_left_alone(tmp_path: Path) -> None:
    ours, theirs = supervisor().open_trial(), supervisor().open_trial()
    try:
        pids = tmp_path / "pids"
        script = f"setsid -f sh -c '{SLEEPER.format(pids=pids)}'; {_wait_for(pids, 1)}"
        _run(theirs, script, tmp_path)
        (other,) = read_pids(pids)
        assert ours.sweep() == 0
        assert ours.close() == 0
        assert running(other)
        assert theirs.close() == 1
        assert wait_gone([other]) == []
    finally:
        ours.close()
        theirs.close()


def test_a_marked_process_started_outside_run_process_is_killed_and_reaped(scope: TrialScope) -> None:
    """A Python script agent's own ``subprocess``: marked, trialbook's child, in no cgroup."""
    child = subprocess.Popen(["sleep", "300"], env=scope.env(ENV), start_new_session=True)
    assert scope.sweep() == 1
    assert child.poll() is not None or wait_gone([child.pid]) == []
    with pytest.raises(ChildProcessError):
        os.waitpid(child.pid, os.WNOHANG)  # already reaped by the sweep: no zombie left


@pytest.fixture
def cgroup_scope(monkeypatch: pytest.MonkeyPatch) -> Iterator[TrialScope]:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")
    opened = supervisor().open_trial()
    assert opened.mechanism == "cgroup"
    yield opened
    opened.close()


def _untraceable(pids: Path) -> list[str]:
    """A program that forks at once a process with no marker in a new session, which leaves a sleep.

    ``setsid -f -w`` forks before anything else and waits for its child, which starts a background
    ``sleep`` (no marker, not the trial's session), writes its pid and exits: nothing but the cgroup
    ties the sleep to the trial.
    """
    sleep = "sleep 300 </dev/null >/dev/null 2>&1 &"  # lets go of the command's pipes
    return ["setsid", "-f", "-w", "env", "-i", "/bin/sh", "-c", f"{sleep} echo $! >> {pids}"]


def test_a_program_that_escapes_at_once_is_already_in_the_cgroup(
    cgroup_scope: TrialScope, tmp_path: Path
) -> None:
    """Not a shell: it enters the group behind a ``sh`` prologue, before its first instruction."""
    pids = tmp_path / "pids"
    env = {**ENV, TRIAL_MARKER: cgroup_scope.marker}
    outcome = asyncio.run(run_process(_untraceable(pids), cwd=tmp_path, env=env, timeout_s=60))
    assert outcome.returncode == 0
    (escaped,) = read_pids(pids)
    assert running(escaped)
    assert cgroup_scope.sweep() == 1
    assert wait_gone([escaped]) == []


def test_a_bash_env_file_runs_inside_the_cgroup_too(cgroup_scope: TrialScope, tmp_path: Path) -> None:
    """``BASH_ENV`` runs before a ``-c`` script's first statement, so such a shell starts behind ``sh``."""
    pids = tmp_path / "pids"
    (tmp_path / "rc").write_text(shlex.join(_untraceable(pids)) + "\n")
    env = {**ENV, TRIAL_MARKER: cgroup_scope.marker, "BASH_ENV": str(tmp_path / "rc")}
    outcome = asyncio.run(run_process(["bash", "-c", "true"], cwd=tmp_path, env=env, timeout_s=60))
    assert outcome.returncode == 0
    (escaped,) = read_pids(pids)
    assert running(escaped)
    assert cgroup_scope.sweep() == 1
    assert wait_gone([escaped]) == []


def test_a_script_in_the_cgroup_keeps_its_lines_arguments_and_output(
    cgroup_scope: TrialScope, tmp_path: Path
) -> None:
    env = {**ENV, TRIAL_MARKER: cgroup_scope.marker}
    script = 'echo "$LINENO $0 $1"\ngrep ^0:: /proc/self/cgroup\necho "$LINENO"\nfalse'
    argv = ["bash", "-c", script, "name", "arg"]
    outcome = asyncio.run(run_process(argv, cwd=tmp_path, env=env, timeout_s=60, merge_stderr=True))
    assert cgroup_scope.group is not None
    lines = outcome.stdout.decode().splitlines()
    assert lines[0] == "1 name arg"
    assert lines[1].endswith("/" + cgroup_scope.group.name)
    assert lines[2:] == ["3"]
    assert outcome.returncode == 1


@pytest.mark.parametrize(
    "argv",
    [["no-such-program-trialbook"], ["/no/such/folder/bash", "-c", "true"]],
    ids=["behind the prologue", "a shell that moves itself"],
)
def test_a_missing_program_in_the_cgroup_is_an_os_error_not_an_exit_code(
    cgroup_scope: TrialScope, tmp_path: Path, argv: list[str]
) -> None:
    """Only a command that starts behind the ``sh`` prologue is looked up first; a shell is its own start."""
    env = {**ENV, TRIAL_MARKER: cgroup_scope.marker}
    with pytest.raises(FileNotFoundError):
        asyncio.run(run_process(argv, cwd=tmp_path, env=env, timeout_s=60))
