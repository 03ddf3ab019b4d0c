"""Noticing at once when the Copilot CLI process exits under a running session.

The SDK talks to the CLI over its pipes and only learns the CLI is gone when it next writes to it, so a
CLI that crashes (out of memory, a signal, a bug) while the session waits for the model would leave the
trial waiting until its timeout. A pidfd becomes readable the moment the process exits, which the event
loop watches for free; where pidfds are missing (not Linux, or a kernel before 5.3) a slow poll stands in.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from typing import Any

__all__ = ["cli_process", "describe_exit", "watch_exit"]

POLL_S = 0.5
"""How often the fallback checks a process that has no pidfd."""


def cli_process(client: Any) -> subprocess.Popen[bytes] | None:
    """The CLI process the SDK started for ``client``, or ``None`` (an external server, an FFI host)."""
    process = getattr(client, "_cli_process", None)
    return process if isinstance(process, subprocess.Popen) else None


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


def watch_exit(process: subprocess.Popen[bytes]) -> asyncio.Future[None]:
    """A future that completes when ``process`` exits; cancel it to stop watching."""
    loop = asyncio.get_running_loop()
    exited: asyncio.Future[None] = loop.create_future()

    def done() -> None:
        if not exited.done():
            exited.set_result(None)

    if process.poll() is not None:  # gone already: a pid that may be reused must not be watched
        done()
        return exited
    try:
        fd = os.pidfd_open(process.pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        loop.add_reader(fd, done)

        def close(_: object) -> None:
            loop.remove_reader(fd)
            os.close(fd)

        exited.add_done_callback(close)
        return exited

    async def poll() -> None:
        while process.poll() is None:
            await asyncio.sleep(POLL_S)
        done()

    poller = loop.create_task(poll())
    exited.add_done_callback(lambda _: poller.cancel())
    return exited
