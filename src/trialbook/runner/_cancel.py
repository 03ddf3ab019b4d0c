"""SIGINT and SIGTERM as one more way a run ends, with its results written, instead of a crash.

The first signal stops starting trials and cancels the running ones (each ends its whole process tree
and removes its sandbox); finished trials keep their verdicts, unfinished ones count as not run, so an
eval whose verdict is not decided yet is ``incomplete``. ``suite.json``, JUnit, the summary and the
decided history lines are written, the table is printed, and the exit code is 128 + the signal number
(130 for SIGINT, 143 for SIGTERM), as a shell reports a process the signal ended.

A second signal stops at once: every trial process is killed and trialbook exits with the same code.
Files are only ever replaced whole (see :mod:`trialbook._util.fsutil`), so nothing is left half-written; the
sandboxes and temp files it had no time to remove are swept at the next start or by ``trialbook clean``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType

from ..sandbox.supervisor import supervisor

__all__ = ["Cancellation", "current_cancellation", "handle_signals"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Cancellation:
    """Whether (and by which signal) the run was asked to stop; the engine attaches its stop callback."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._stop: tuple[asyncio.AbstractEventLoop, Callable[[], None]] | None = None

    @property
    def requested(self) -> bool:
        """True once a signal arrived."""
        return self.signum is not None

    @property
    def exit_code(self) -> int | None:
        """``128 + signal`` once a signal arrived, else ``None``."""
        return None if self.signum is None else 128 + self.signum

    @property
    def signal_name(self) -> str:
        """``SIGINT`` or ``SIGTERM`` (empty before any signal)."""
        return "" if self.signum is None else signal.Signals(self.signum).name

    def attach(self, loop: asyncio.AbstractEventLoop, stop: Callable[[], None]) -> None:
        """Call ``stop`` in ``loop`` when the signal arrives (at once, if it already did)."""
        self._stop = (loop, stop)
        if self.requested:
            loop.call_soon_threadsafe(stop)

    def detach(self) -> None:
        """The loop is finished: a later signal only marks the run cancelled."""
        self._stop = None

    def request(self, signum: int) -> None:
        """React to ``signum``: the first asks the run to stop, a second one stops the process at once."""
        if self.signum is not None:
            _say(f"trialbook: second {signal.Signals(signum).name}: stopping at once")
            supervisor().kill_everything()
            os._exit(128 + self.signum)
        self.signum = signum
        _say(
            f"trialbook: {self.signal_name}: stopping the running trials and writing what finished "
            "(send it again to stop at once)"
        )
        if self._stop is not None:
            loop, stop = self._stop
            with contextlib.suppress(RuntimeError):  # the loop closed in between
                loop.call_soon_threadsafe(stop)


def _say(message: str) -> None:
    """Write ``message`` to stderr's file descriptor, past the stream's buffer.

    A signal handler may run inside a write that a full pipe interrupted, with ``sys.stderr``'s buffer
    still locked: writing through it then fails ("reentrant call"). Where stderr has no descriptor (a
    test's captured stream), it is written the usual way.
    """
    data = (message + "\n").encode(errors="replace")
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            sys.stderr.write(message + "\n")
        return
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]


_current: Cancellation | None = None


def current_cancellation() -> Cancellation | None:
    """The cancellation :func:`handle_signals` installed, for :func:`trialbook.run` to honour."""
    return _current


@contextlib.contextmanager
def handle_signals() -> Iterator[Cancellation]:
    """Turn SIGINT and SIGTERM into a :class:`Cancellation` while the block runs (main thread only).

    Front ends (``trialbook eval``, ``trialbook ci``) wrap the run and the report in it; a library call
    without it keeps Python's default behaviour (``KeyboardInterrupt``).
    """
    global _current
    cancel = Cancellation()
    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return

    def on_signal(signum: int, frame: FrameType | None) -> None:
        cancel.request(signum)

    previous = {sig: signal.signal(sig, on_signal) for sig in SIGNALS}
    outer, _current = _current, cancel
    try:
        yield cancel
    finally:
        _current = outer
        for sig, handler in previous.items():
            signal.signal(sig, handler)
