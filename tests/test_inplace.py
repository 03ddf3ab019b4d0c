"""Work done in place until it shows it is slow: sleep and CPU count, the wait for a CPU does not."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from trialbook._inplace import LIMIT_S, STRIKES, InPlace


def _busy(seconds: float) -> None:
    """Use ``seconds`` of this thread's CPU without ever sleeping."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


def test_result_and_exceptions_are_the_callers() -> None:
    inplace = InPlace()
    assert inplace.run(lambda: 42) == 42

    def fails() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        inplace.run(fails)
    assert inplace.active  # a fast failure is not a slow piece


def test_pieces_that_sleep_move_the_run_to_threads_after_the_tolerated_number() -> None:
    inplace = InPlace()
    for _ in range(STRIKES - 1):
        inplace.run(lambda: time.sleep(LIMIT_S * 3))  # a disk that makes each write wait
        assert inplace.active
    inplace.run(lambda: time.sleep(LIMIT_S * 3))
    assert not inplace.active
    inplace.run(lambda: None)
    assert not inplace.active, "once slow, the run stays with threads: no flapping"


def test_pieces_that_use_the_cpu_count_too() -> None:
    """An agent's tree of thousands of files costs CPU to remove, not sleep: it must count all the same."""
    inplace = InPlace(strikes=1)
    inplace.run(lambda: _busy(LIMIT_S * 2))
    assert not inplace.active


def test_short_pieces_never_count() -> None:
    inplace = InPlace(strikes=1)
    for _ in range(200):
        inplace.run(lambda: _busy(LIMIT_S / 20))
        inplace.run(lambda: time.sleep(LIMIT_S / 20))
    assert inplace.active


def test_pieces_on_other_threads_are_timed_on_their_own() -> None:
    inplace = InPlace(strikes=1)
    entered, checked = threading.Event(), threading.Event()

    def slow_piece() -> None:
        entered.set()
        assert checked.wait(10)
        time.sleep(LIMIT_S * 3)

    other = threading.Thread(target=inplace.run, args=(slow_piece,))

    def short_piece() -> None:
        other.start()
        assert entered.wait(10)  # the other thread's piece began while this one is open

    inplace.run(short_piece)
    assert inplace.active, "this thread's piece was short: the other thread's sleep is not its own"
    checked.set()
    other.join()
    assert not inplace.active


@pytest.fixture
def one_busy_cpu() -> Iterator[int]:
    """A CPU this thread shares with a process that never sleeps: this thread waits its turn on it."""
    cpu = min(os.sched_getaffinity(0))
    hog = subprocess.Popen(
        [sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{cpu}}})\nwhile True: pass"]
    )
    mine = os.sched_getaffinity(0)
    try:
        time.sleep(0.1)  # the hog is running on its CPU
        os.sched_setaffinity(0, {cpu})
        yield cpu
    finally:
        os.sched_setaffinity(0, mine)
        hog.kill()
        hog.wait()


def test_waiting_for_a_cpu_is_not_a_slow_piece(one_busy_cpu: int) -> None:
    """The machine's other load stretches wall time alike on any thread: it must not move work to one."""
    inplace = InPlace(strikes=1)
    # Each piece uses a little CPU and never sleeps, but shares its CPU with the hog: the scheduler
    # makes it wait, so wall time is far above the limit while CPU time is far below it.
    stretched = 0.0
    for _ in range(10):
        started = time.perf_counter()
        inplace.run(lambda: _busy(LIMIT_S * 0.8))
        stretched = max(stretched, time.perf_counter() - started)
    assert inplace.active
    assert stretched > LIMIT_S, "the test did not make the piece wait for its CPU; it checked nothing"
