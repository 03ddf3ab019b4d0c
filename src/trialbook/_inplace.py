"""Short work at a trial's end done where it is asked for, on the event loop, until it shows it is slow.

A trial without a template ends with a few small writes (``result.json``, ``changes.json``) and a few
removals (its folder emptied for the next trial). Handing that to a worker thread costs the event loop
more than doing it: the hop itself, and from then on the loop and the thread take turns at the
interpreter lock at every system call the thread makes. With 200 trivial trials at concurrency 4 on a
2-core machine, doing both on the loop cut a trial's cost by 0.4-1.6 ms (see ``benchmarks/README.md``).

Where the disk makes each operation wait (a network file system, a device that blocks on discards), or
where an agent left a tree of thousands of files, the same work would hold the loop up, and every
running trial with it. So each piece done in place is timed: one that used more than :data:`LIMIT_S` of
CPU, or slept more than that, counts against the run, and after :data:`STRIKES` of them every later
piece goes to worker threads, for the rest of the run. Time the thread spent ready but not running (the
machine's other load) is not counted: it is the same in a worker thread.
"""

from __future__ import annotations

import resource
import threading
import time
from collections.abc import Callable
from typing import TypeVar

__all__ = ["LIMIT_S", "STRIKES", "InPlace"]

_T = TypeVar("_T")

LIMIT_S = 0.005
"""CPU or sleep beyond which a piece of work counts as slow: some 15 times what a hop to a thread costs."""

STRIKES = 3
"""Slow pieces a run tolerates in place: one can be a coincidence (a journal commit, a page fault)."""


def _slept() -> int:
    """How often the calling thread has waited for something (a disk, a lock) so far."""
    return resource.getrusage(resource.RUSAGE_THREAD).ru_nvcsw


class InPlace:
    """One run's choice between doing short work on the calling thread and handing it to a thread."""

    def __init__(self, *, limit_s: float = LIMIT_S, strikes: int = STRIKES) -> None:
        self._limit_s = limit_s
        self._left = strikes
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        """Whether work is still done in place: fewer than the tolerated slow pieces so far."""
        return self._left > 0

    def run(self, function: Callable[[], _T]) -> _T:
        """Call ``function`` here and now; count it against the run if it turned out slow.

        Its result and its exceptions are the caller's, as if it had been called directly.
        """
        waits = _slept()
        wall = time.perf_counter()
        cpu = time.thread_time()
        try:
            return function()
        finally:
            used = time.thread_time() - cpu
            elapsed = time.perf_counter() - wall
            # Wall time not spent on the CPU is either sleep or the wait for a CPU; only a thread that
            # went to sleep meanwhile can have slept.
            slept = elapsed - used if _slept() > waits else 0.0
            if used > self._limit_s or slept > self._limit_s:
                with self._lock:
                    self._left = max(0, self._left - 1)
