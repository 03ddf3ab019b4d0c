"""On Python 3.11, learn of a child's exit from its pidfd on the event loop, not from a thread per child.

asyncio needs a child watcher to learn when a subprocess exits. Python 3.11's default,
``ThreadedChildWatcher``, starts a thread per subprocess that blocks in ``waitpid``: a thread start and
a hand-off back to the loop for every agent, check and literal step, paid on the event loop that every
running trial shares. Python 3.12 picks pidfds by itself where the kernel has them (Linux 5.3 and
later): the exit is one more file descriptor the loop already polls.

:func:`prefer_pidfd_watcher` makes 3.11 do what 3.12 does, and only then: when the watcher is still the
default threaded one (one an application installed is left alone), on a kernel that hands out pidfds.
The watcher below, like 3.12's, serves whichever loop is running when a process starts (3.11's own
``PidfdChildWatcher`` is tied to the main thread's loop, and trialbook may run on a loop of its own in
another thread, see :mod:`trialbook._blocking`).
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
from collections.abc import Callable
from typing import Any, TypeVarTuple

__all__ = ["prefer_pidfd_watcher"]

_Ts = TypeVarTuple("_Ts")


class _PidfdWatcher(asyncio.AbstractChildWatcher):
    """Python 3.12's loop-agnostic pidfd watcher: the running loop polls each child's pidfd."""

    def add_child_handler(self, pid: int, callback: Callable[[int, int, *_Ts], object], *args: *_Ts) -> None:
        loop = asyncio.get_running_loop()
        pidfd = os.pidfd_open(pid)
        loop.add_reader(pidfd, self._do_wait, loop, pid, pidfd, callback, args)

    @staticmethod
    def _do_wait(
        loop: asyncio.AbstractEventLoop, pid: int, pidfd: int, callback: Any, args: tuple[Any, ...]
    ) -> None:
        loop.remove_reader(pidfd)
        try:
            _, status = os.waitpid(pid, 0)
        except ChildProcessError:  # reaped elsewhere already: asyncio's own watchers report 255 too
            returncode = 255
        else:
            returncode = os.waitstatus_to_exitcode(status)
        os.close(pidfd)
        callback(pid, returncode, *args)

    def remove_child_handler(self, pid: int) -> bool:
        return False  # the reader goes when the child exits, as with Python 3.12's

    def attach_loop(self, loop: asyncio.AbstractEventLoop | None) -> None:
        pass  # serves every loop: the one running when a child starts

    def close(self) -> None:
        pass

    def is_active(self) -> bool:
        return True

    def __enter__(self) -> _PidfdWatcher:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


def _pidfds_work() -> bool:
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):  # not Linux, a kernel before 5.3, or a seccomp filter refusing it
        return False
    return True


@functools.cache
def prefer_pidfd_watcher() -> None:
    """Once per process on Python 3.11: replace the default threaded child watcher with a pidfd one."""
    if sys.version_info >= (3, 12) or not sys.platform.startswith("linux"):
        return
    # get_child_watcher makes the default watcher if nothing chose one yet: exactly that one is replaced
    # (a second thread getting here at the same moment finds ours and leaves it).
    if type(asyncio.get_child_watcher()) is asyncio.ThreadedChildWatcher and _pidfds_work():
        asyncio.set_child_watcher(_PidfdWatcher())
