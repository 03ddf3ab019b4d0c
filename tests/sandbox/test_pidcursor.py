"""The pid cursor: processes started since a reading are all listed, and a wrap-around is never missed."""

from __future__ import annotations

import collections
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook.sandbox import _pidcursor
from trialbook.sandbox._pidcursor import Cursor, cursor, span, young
from trialbook.sandbox._procfs import has_procfs

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

THREADS = (
    "import threading, time\nfor _ in range(4): threading.Thread(target=time.sleep, args=(60,)).start()\n"
)


def test_a_process_started_after_the_reading_is_listed_once_with_its_session() -> None:
    start = cursor()
    assert start is not None
    # A process with four threads: each thread has a pid of its own, and must not count as a process.
    child = subprocess.Popen(
        [sys.executable, "-c", THREADS + "print('up', flush=True)"], stdout=subprocess.PIPE
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"up\n"
        now = cursor(before=False)
        assert now is not None
        pids = span(start, now)
        assert pids is not None and child.pid in pids
        listed = [entry for entry in young(pids) if entry.pid == child.pid]
        assert len(listed) == 1
        assert listed[0].session is not None
        assert not any(
            entry.pid in pids and entry.pid != child.pid and entry.ppid == child.pid for entry in listed
        )
        # Also through one listing of /proc, the path taken when many pids were handed out.
        assert child.pid in {entry.pid for entry in young(range(pids.start - 1000, pids.stop))}
    finally:
        child.kill()
        child.communicate()


def test_a_process_started_before_the_reading_is_not_listed() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        start = cursor()
        now = cursor(before=False)
        assert start is not None and now is not None
        pids = span(start, now)
        assert pids is not None
        assert child.pid not in {entry.pid for entry in young(pids)}
    finally:
        child.kill()
        child.wait()


def test_a_cursor_that_went_back_or_too_many_forks_mean_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_pidcursor, "_pid_max", lambda: 32768)
    assert span(Cursor(5000, 100), Cursor(4000, 200)) is None  # wrapped
    assert span(Cursor(5000, 100), Cursor(5010, 100 + 10 + 16384)) is None  # may have gone round once
    assert span(Cursor(5000, 100), Cursor(5010, 120)) == range(5001, 5011)


@st.composite
def _histories(draw: st.DrawFn) -> tuple[int, list[int], int, list[bool]]:
    # Long enough to wrap around several times: sizes are drawn, not left to how long lists tend to be.
    pid_max = draw(st.integers(min_value=400, max_value=2000))
    # Fewer than a sixth of the pids in use, as :func:`cursor` requires before it hands out a reading.
    in_use = draw(
        st.lists(st.integers(min_value=300, max_value=pid_max - 1), max_size=pid_max // 6, unique=True)
    )
    last = draw(st.integers(min_value=300, max_value=pid_max - 1))
    forks = draw(st.integers(min_value=0, max_value=3 * pid_max))
    every = draw(st.integers(min_value=1, max_value=7))
    exits = [step % every == 0 for step in range(forks)]
    return pid_max, in_use, last, exits


@given(_histories())
def test_span_holds_every_pid_handed_out_or_says_unknown(
    history: tuple[int, list[int], int, list[bool]],
) -> None:
    """A model of the kernel's cyclic allocator: ``span`` may give up, but never leaves a new pid out.

    Each step forks one process (the next free pid after the last, from 300 again past ``pid_max``),
    and may end the oldest one, so that the machine stays under a sixth of its pids in use.
    """
    pid_max, in_use, last, exits = history
    alive = collections.deque(in_use)
    taken = set(in_use)
    forks = 0
    start = Cursor(last, forks)
    handed: list[int] = []
    for ends_one in exits:
        if alive and (ends_one or len(alive) >= pid_max // 6):
            taken.discard(alive.popleft())
        pid = last + 1
        while pid >= pid_max or pid in taken:
            pid = 300 if pid >= pid_max else pid + 1
        alive.append(pid)
        taken.add(pid)
        handed.append(pid)
        last, forks = pid, forks + 1
    original = _pidcursor._pid_max
    try:
        _pidcursor._pid_max = lambda: pid_max  # type: ignore[assignment]
        pids = span(start, Cursor(last, forks))
    finally:
        _pidcursor._pid_max = original
    if pids is not None:
        assert all(pid in pids for pid in handed)
