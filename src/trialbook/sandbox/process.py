"""Run a process the way trials need: its own process group, a hard deadline, nothing left behind.

Every process a trial starts (an agent CLI, a ``succeeds`` check, a literal step) goes through
:func:`run_process`, so a timeout or a cancelled trial ends the whole group, grandchildren included.
What left the group (``setsid``, double forks) is the :mod:`~trialbook.sandbox.supervisor`'s: the
process is registered with it and, when its environment names a trial, started inside that trial's
cgroup if there is one.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._records import FrozenRecord, frozen_record
from .._tasks import start_now
from ._capture import OutputCapture, StreamCapture
from ._watcher import prefer_pidfd_watcher
from .supervisor import supervisor

__all__ = ["ProcessOutcome", "kill_group", "run_process"]

GRACE_S = 2.0
"""How long a process group gets between SIGTERM and SIGKILL."""


@frozen_record
class ProcessOutcome(FrozenRecord):
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


class _LeaderExitProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Reports the leader's exit the moment it happens.

    On Python 3.11 ``Process.wait()`` also waits for the output pipes to close, which a background child
    holding them can put off until the deadline; the runner needs the leader's exit itself.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_CHUNK, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


_CHUNK = 1 << 16


async def _terminate(proc: asyncio.subprocess.Process, exited: asyncio.Future[None]) -> None:
    kill_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(exited), GRACE_S)
    # Children may ignore SIGTERM or outlive a leader that exited: the group goes either way.
    kill_group(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(exited), GRACE_S)


async def _pump(
    stream: asyncio.StreamReader | None,
    sink: StreamCapture | None,
    on_line: Callable[[bytes], None] | None,
    line_limit: int,
) -> None:
    # Chunks, not readline(): a single line longer than the stream limit (a progress bar, minified
    # output) must not end the capture. Memory stays bounded: the sink keeps a head and a tail, and a
    # line handed to ``on_line`` is cut at ``line_limit`` bytes (the rest of it is skipped).
    if stream is None:
        return
    pending = bytearray()
    skipping = False
    while True:
        chunk = await stream.read(_CHUNK)
        if not chunk:
            if on_line is not None and pending:
                on_line(bytes(pending))
            return
        if sink is not None:
            sink.feed(chunk)
        if on_line is None:
            continue
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not skipping:
                pending += chunk[start : end + 1]
            on_line(bytes(pending))
            pending.clear()
            skipping = False
            start = end + 1
        if not skipping:
            pending += chunk[start:]
            if len(pending) > line_limit:
                del pending[line_limit:]
                skipping = True


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None = None,
    stdin: bytes | None = None,
    on_stdout_line: Callable[[bytes], None] | None = None,
    merge_stderr: bool = False,
    capture: OutputCapture | None = None,
    name: str = "output",
) -> ProcessOutcome:
    """Run ``argv`` in a new session; on deadline or cancellation kill its whole process group.

    Standard input is closed (or fed ``stdin``), so agents that read it to EOF never wait on it.
    Output captured before a kill is kept: a timed-out run still leaves its partial transcript.
    With ``merge_stderr`` both streams share one pipe, so ``stdout`` keeps them interleaved as a
    terminal would show them and ``stderr`` is empty.

    Each stream is masked and cut to ``capture``'s limit as it is read (see :mod:`._capture`) and
    recorded there as ``name`` (merged) or ``name.stdout`` and ``name.stderr``; without ``capture`` the
    default limit applies and nothing is masked. Standard output handed to ``on_stdout_line`` (an event
    stream the caller parses and keeps itself) is not kept a second time: ``stdout`` is then empty.
    """
    capture = capture if capture is not None else OutputCapture()
    prefer_pidfd_watcher()  # Python 3.11: no thread per process to learn of its exit (see ._watcher)
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    owner = supervisor()
    # Forked now, in this turn of the loop: not after whatever else is ready (see trialbook._tasks).
    spawn = start_now(
        loop.subprocess_exec(
            lambda: _LeaderExitProtocol(loop),
            *owner.prepare(argv, env),
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
            start_new_session=True,
        )
    )
    try:
        transport, protocol = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        await _abandon(spawn, env)
        raise
    proc = asyncio.subprocess.Process(transport, protocol, loop)
    owner.started(proc.pid, env)
    out = capture.stream() if on_stdout_line is None else None
    err = capture.stream() if not merge_stderr else None
    pumps = asyncio.gather(
        _pump(proc.stdout, out, on_stdout_line, capture.limit), _pump(proc.stderr, err, None, capture.limit)
    )

    async def communicate() -> None:
        if stdin is not None and proc.stdin is not None:
            proc.stdin.write(stdin)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                await proc.stdin.drain()
            proc.stdin.close()
        await asyncio.shield(protocol.exited)
        # The leader exited; children it left in the group must not outlive the trial (nor hold
        # the pipes open). What is left in the pipes is collected by _drain, for a bounded time.
        kill_group(proc.pid)

    timed_out = False
    try:
        # A timeout block, not wait_for: no task of its own, so no extra event-loop turns per command.
        async with asyncio.timeout(timeout_s):
            await communicate()
    except TimeoutError:
        timed_out = True
        await _terminate(proc, protocol.exited)
    except BaseException:
        await asyncio.shield(_terminate(proc, protocol.exited))
        raise
    finally:
        await _drain(pumps, transport)
        if protocol.exited.done():
            owner.waited(proc.pid)
    stdout = _finish(capture, out, name if merge_stderr else f"{name}.stdout")
    stderr = _finish(capture, err, f"{name}.stderr")
    return ProcessOutcome(
        returncode=None if timed_out else transport.get_returncode(),
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        duration_ms=(time.monotonic() - started) * 1000,
    )


async def _abandon(
    spawn: asyncio.Future[tuple[asyncio.SubprocessTransport, _LeaderExitProtocol]], env: Mapping[str, str]
) -> None:
    """End a process whose start was cancelled: its whole group, without waiting on its pipes.

    The process runs as soon as it is forked, before the loop has connected its pipes. Cancelling
    ``subprocess_exec`` then kills only the leader and (Python 3.11) waits for the pipes to close,
    which background children hold open for as long as they live. Letting the start finish and then
    killing the group ends them all.
    """
    while not spawn.done():
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.shield(spawn)
    if spawn.cancelled() or spawn.exception() is not None:
        return
    transport, protocol = spawn.result()
    pid = transport.get_pid()
    try:
        if pid is not None:
            owner = supervisor()
            owner.started(pid, env)  # its session is the trial's, for the sweep that follows
            kill_group(pid)
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(protocol.exited), GRACE_S)
            if protocol.exited.done():
                owner.waited(pid)
    finally:
        transport.close()


def _finish(capture: OutputCapture, stream: StreamCapture | None, name: str) -> bytes:
    if stream is None:
        return b""
    data = stream.finish()
    capture.record(name, stream)
    return data


async def _drain(pumps: asyncio.Future[Any], transport: asyncio.SubprocessTransport) -> None:
    """Collect what the pipes still hold, then close them even if a process outside the group holds them."""
    try:
        if not pumps.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(GRACE_S):
                    await asyncio.shield(pumps)
    finally:
        transport.close()
        # Retrieved whenever it ends, so asyncio never reports "exception was never retrieved" (a
        # cancelled gather ends with a CancelledError set as its exception, later than cancel()).
        pumps.add_done_callback(_retrieve)
        pumps.cancel()


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()
