"""Noticing at once when the Copilot CLI process exits under a running session.

The SDK talks to the CLI over its pipes and only learns the CLI is gone when it next writes to it, so a
CLI that crashes (out of memory, a signal, a bug) while the session waits for the model would leave the
trial waiting until its timeout. A pidfd becomes readable the moment the process exits, which the event
loop watches for free; where pidfds are missing (not Linux, or a kernel before 5.3) a slow poll stands in.

``Popen.poll()`` alone cannot tell: while another thread (the SDK's) waits for the process, it answers
"still running" without looking. The pidfd answers from the kernel, and ``waitid(P_PIDFD, WNOWAIT)``
reads how the process ended without reaping it, so the SDK's own wait still gets its status.

The SDK's reader thread reaps the CLI itself (``Popen.poll()``) as soon as its pipe closes, so the exit can
be seen with the process already reaped but its ``returncode`` not yet set: that thread holds the
``Popen``'s wait lock from the reaping to the recording. ``Popen.wait()`` waits for that lock and returns
the status it recorded, where reading ``returncode`` at once would say "exit status unknown".
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
from typing import Any

__all__ = ["cli_process", "describe_exit", "has_exited", "watch_exit"]

POLL_S = 0.5
"""How often the fallback checks a process that has no pidfd."""


def cli_process(client: Any) -> subprocess.Popen[bytes] | None:
    """The CLI process the SDK started for ``client``, or ``None`` (an external server, an FFI host)."""
    process = getattr(client, "_cli_process", None)
    return process if isinstance(process, subprocess.Popen) else None


def _pidfd(process: subprocess.Popen[bytes]) -> int | None:
    """A pidfd of ``process``; ``None`` where there are none. Raises ``ProcessLookupError`` if reaped."""
    if process.returncode is not None:
        raise ProcessLookupError(process.pid)  # reaped: the pid may belong to someone else by now
    try:
        return os.pidfd_open(process.pid)
    except ProcessLookupError:
        raise
    except (AttributeError, OSError):
        return None


def _reaped(process: subprocess.Popen[bytes]) -> int | None:
    """The status of a ``process`` already reaped through its ``Popen``, once that call has recorded it.

    Never blocks for long: the process is gone, and the thread that reaped it holds the wait lock only
    until it sets ``returncode``.
    """
    if process.returncode is not None:
        return process.returncode
    return process.wait()


def _status(process: subprocess.Popen[bytes], fd: int | None) -> int | None:
    """How ``process`` ended, as a ``Popen.returncode`` (negative: the signal), read without reaping."""
    if process.returncode is not None:
        return process.returncode
    if fd is not None:
        try:
            found = os.waitid(os.P_PIDFD, fd, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:  # reaped since it became readable, by another thread's Popen call
            return _reaped(process)
        except (OSError, AttributeError):
            return process.returncode
        if found is not None:
            killed = found.si_code in (os.CLD_KILLED, os.CLD_DUMPED)
            return -found.si_status if killed else found.si_status
    return process.returncode


def has_exited(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` has ended (a zombie counts), even while another thread waits for it."""
    try:
        fd = _pidfd(process)
    except ProcessLookupError:
        return True
    if fd is None:
        return process.poll() is not None
    try:
        return bool(select.select([fd], [], [], 0)[0])
    finally:
        os.close(fd)


def describe_exit(returncode: int | None) -> str:
    """``exit code 3``, ``killed by SIGKILL``, or ``exit status unknown``."""
    if returncode is None:
        return "exit status unknown"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def watch_exit(process: subprocess.Popen[bytes]) -> asyncio.Future[int | None]:
    """A future of how ``process`` ended (``Popen.returncode`` style); cancel it to stop watching."""
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[int | None] = loop.create_future()
    try:
        fd = _pidfd(process)
    except ProcessLookupError:
        exited.set_result(_reaped(process))
        return exited
    if fd is not None:

        def readable() -> None:
            if not exited.done():
                exited.set_result(_status(process, fd))

        loop.add_reader(fd, readable)

        def close(_: object) -> None:
            loop.remove_reader(fd)
            os.close(fd)

        exited.add_done_callback(close)
        return exited

    async def poll() -> None:
        while process.poll() is None:
            await asyncio.sleep(POLL_S)
        if not exited.done():
            exited.set_result(process.returncode)

    poller = loop.create_task(poll())
    exited.add_done_callback(lambda _: poller.cancel())
    return exited
