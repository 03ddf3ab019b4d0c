"""The process table from ``/proc``: a marker is found in every process that can carry it, and only there."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from trialbook.sandbox._procfs import boot_ticks, has_procfs, processes

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


def test_a_process_older_than_since_is_listed_without_reading_its_environment() -> None:
    value = uuid.uuid4().hex
    child = _marked(value)
    try:
        later = boot_ticks()
        assert later is not None
        entries = {e.pid: e for e in processes("PROBE_MARK", since=later + 3600 * 100)}
        # Still in the table (its parent and state count for the tree), but its marker is not read:
        # no marker made after it started can be in its environment.
        assert child.pid in entries
        assert entries[child.pid].marker is None
        assert entries[child.pid].ppid > 0
    finally:
        child.kill()
        child.wait()
