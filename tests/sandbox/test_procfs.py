"""The process table from ``/proc``: a marker is found in every process that can carry it, and only there."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import pytest

from trialbook.sandbox._procfs import boot_ticks, clock_agrees, dying, has_procfs, processes

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")


def _marked(value: str) -> subprocess.Popen[bytes]:
    env = {"PATH": "/usr/bin:/bin", "PADDING": "x" * 100_000, "PROBE_MARK": value}
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env=env)


def test_a_process_started_after_since_has_its_marker_read() -> None:
    value = uuid.uuid4().hex
    since = boot_ticks()
    assert since is not None
    child = _marked(value)
    try:
        # A 100 KB variable before the marker: the marker sits past the first read of the environment.
        found = {e.pid: e.marker for e in processes("PROBE_MARK", since=since)}
        assert found.get(child.pid) == value
        assert {e.pid: e.marker for e in processes("PROBE_MARK")}.get(child.pid) == value
    finally:
        child.kill()
        child.wait()


def test_a_process_older_than_since_is_not_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """It can carry no marker made since, nor descend from a process started since."""
    value = uuid.uuid4().hex
    child = _marked(value)
    try:
        later = boot_ticks()
        assert later is not None
        assert clock_agrees()
        assert child.pid not in {e.pid for e in processes("PROBE_MARK", since=later + 3600 * 100)}
        # Where boot clock and /proc disagree, ``since`` is ignored: every process is listed.
        monkeypatch.setattr("trialbook.sandbox._procfs.clock_agrees", lambda: False)
        entries = {e.pid: e for e in processes("PROBE_MARK", since=later + 3600 * 100)}
        assert entries[child.pid].marker == value
    finally:
        child.kill()
        child.wait()


TRAPS_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, lambda *_: None); print(flush=True); time.sleep(60)"
)


@pytest.mark.parametrize(
    ("program", "signum", "on_its_way_out"),
    [
        (["sleep", "60"], None, False),
        (["sleep", "60"], signal.SIGSTOP, False),
        ([sys.executable, "-c", TRAPS_TERM], signal.SIGTERM, False),  # handled: it lives on
        (["sleep", "60"], signal.SIGTERM, True),  # its default action ends it
        (["sleep", "60"], signal.SIGKILL, True),
    ],
    ids=["running", "stopped", "term-handled", "term", "kill"],
)
def test_a_process_a_fatal_signal_reached_is_dying_from_the_moment_it_was_sent(
    program: list[str], signum: signal.Signals | None, on_its_way_out: bool
) -> None:
    # From the kill() call on, whether it still runs, is exiting or is a zombie this test has not reaped:
    # a sweep that comes after a group kill can tell its members from strays whatever the machine's speed.
    with subprocess.Popen(program, stdout=subprocess.PIPE) as child:
        try:
            if program[0] == sys.executable:
                assert child.stdout is not None
                child.stdout.readline()  # its handler is in place
            if signum is not None:
                os.kill(child.pid, signum)
            assert dying(child.pid) is on_its_way_out
        finally:
            child.kill()
    assert dying(child.pid) is False  # reaped: nothing to read
