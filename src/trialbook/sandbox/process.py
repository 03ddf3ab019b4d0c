"""Run a process the way trials need: its own process group, a hard deadline, nothing left behind.

Every process a trial starts (an agent CLI, a ``succeeds`` check, a literal step) goes through
:func:`run_process`, so a timeout or a cancelled trial ends the whole group, grandchildren included.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessOutcome", "kill_group", "run_process"]

GRACE_S = 2.0
"""How long a process group gets between SIGTERM and SIGKILL."""


@dataclass(frozen=True)
class ProcessOutcome:
    """How a process ended. ``returncode`` is ``None`` when it was killed for the deadline."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration_ms: float


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by ``pid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


async def _terminate(proc: asyncio.subprocess.Process) -> None:
    kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), GRACE_S)
    # Children may ignore SIGTERM or outlive a leader that exited: the group goes either way.
    kill_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        await proc.wait()


async def _pump(
    stream: asyncio.StreamReader | None, sink: bytearray, on_line: Callable[[bytes], None] | None
) -> None:
    if stream is None:
        return
    while True:
        line = await stream.readline()
        if not line:
            return
        sink.extend(line)
        if on_line is not None:
            on_line(line)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None = None,
    stdin: bytes | None = None,
    on_stdout_line: Callable[[bytes], None] | None = None,
) -> ProcessOutcome:
    """Run ``argv`` in a new session; on deadline or cancellation kill its whole process group.

    Standard input is closed (or fed ``stdin``), so agents that read it to EOF never wait on it.
    Output captured before a kill is kept: a timed-out run still leaves its partial transcript.
    """
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    out, err = bytearray(), bytearray()

    async def communicate() -> None:
        if stdin is not None and proc.stdin is not None:
            proc.stdin.write(stdin)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await proc.stdin.drain()
            proc.stdin.close()
        pumps = asyncio.gather(_pump(proc.stdout, out, on_stdout_line), _pump(proc.stderr, err, None))
        try:
            await proc.wait()
            # The leader exited; children it left in the group must not outlive the trial (nor hold
            # the pipes open).
            kill_group(proc.pid)
            await pumps
        finally:
            pumps.cancel()

    timed_out = False
    try:
        await asyncio.wait_for(communicate(), timeout_s)
    except TimeoutError:
        timed_out = True
        await _terminate(proc)
    except BaseException:
        await asyncio.shield(_terminate(proc))
        raise
    return ProcessOutcome(
        returncode=None if timed_out else proc.returncode,
        stdout=bytes(out),
        stderr=bytes(err),
        timed_out=timed_out,
        duration_ms=(time.monotonic() - started) * 1000,
    )
