"""A process caught inside ``execve`` by a sweep is still found by its marker.

``subprocess.Popen`` returns once the child's exec is past its point of no return, but for a moment
after that the new program's environment is not readable yet (``/proc/<pid>/environ`` reads empty). A
sweep right then saw no marker, called the pass clean, moved its starting point past the pid and never
looked at it again: the process outlived its trial. Each round here starts a marked process and sweeps
at once, as a Python script agent's own ``subprocess`` call followed by the trial's end would.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import supervisor

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")


def test_a_process_swept_the_moment_it_execs_is_found_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "off")  # the marker alone: a cgroup would hold it anyway
    # Another program starting processes all the time, as beside a busy test suite: the child is then
    # often caught between its exec and its new environment.
    busy = subprocess.Popen(["bash", "-c", "while :; do /bin/true & done"], start_new_session=True)
    missed: list[int] = []
    try:
        _rounds(missed)
    finally:
        os.killpg(busy.pid, signal.SIGKILL)
        busy.wait()
    assert missed == []


def _rounds(missed: list[int]) -> None:
    for round_ in range(100):
        scope = supervisor().open_trial()
        child = subprocess.Popen(
            ["sleep", "300"], env=scope.env({"PATH": "/usr/bin:/bin"}), start_new_session=True
        )
        try:
            if scope.sweep() != 1:
                missed.append(round_)
        finally:
            scope.close()
            child.kill()
            child.wait()


def test_a_finished_program_with_an_empty_environment_is_not_taken_for_one_inside_exec() -> None:
    """``env -i`` leaves a program with arguments and no environment: it is done, whatever its age."""
    from trialbook.sandbox._procfs import mid_exec

    child = subprocess.Popen(
        ["env", "-i", "/bin/sh", "-c", "echo started; exec sleep 300"], stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"started\n"
        for _ in range(200):  # until sh has exec'd sleep
            with open(f"/proc/{child.pid}/cmdline", "rb") as file:
                if file.read().startswith(b"sleep"):
                    break
        assert not mid_exec(child.pid)
        assert not mid_exec(os.getpid())
    finally:
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
