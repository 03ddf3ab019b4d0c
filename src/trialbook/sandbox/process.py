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
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ._backend import IsolationBackend
from ._capture import OutputCapture, StreamCapture
from ._child import Child, kill_group
from .supervisor import supervisor

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


async def _terminate(child: Child) -> None:
    """SIGTERM the group, SIGKILL it after the grace period, and wait (bounded) for the leader's exit.

    The group is signalled only while its leader is uncollected: once it was, its group was killed
    already (see ._child) and its pid may name another process's group now. Cancelled on the way
    (the trial cancelled again, the event loop shutting down), it kills the group and collects the
    leader there and then, so no cancellation leaves the group running.
    """
    try:
        if not child.exited.done():
            kill_group(child.pid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(GRACE_S):
                    await asyncio.shield(child.exited)
        # Children may ignore SIGTERM: the group goes either way (with the leader's exit, or here).
        if not child.exited.done():
            kill_group(child.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(GRACE_S):
                    await asyncio.shield(child.exited)
    except BaseException:
        child.end_now(GRACE_S)
        raise


class _Stream:
    """One pipe's bytes: into its capture, and line by line to ``on_line`` when there is one.

    Chunks, not lines, come in: a single line longer than any buffer (a progress bar, minified output)
    must not end the capture. Memory stays bounded: the capture keeps a head and a tail, and a line
    handed to ``on_line`` is cut at ``line_limit`` bytes, its newline included (the rest of it is
    skipped), however the reads split it.
    """

    def __init__(
        self, sink: StreamCapture | None, on_line: Callable[[bytes], None] | None, line_limit: int
    ) -> None:
        self._sink = sink
        self._on_line = on_line
        self._limit = line_limit
        self._pending = bytearray()
        self._skipping = False

    def feed(self, chunk: bytes) -> None:
        if self._sink is not None:
            self._sink.feed(chunk)
        on_line = self._on_line
        if on_line is None:
            return
        pending = self._pending
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            if not self._skipping:
                # Cut here as below, so a line's cut does not depend on how the reads split it.
                pending += chunk[start : min(end + 1, start + self._limit - len(pending))]
            on_line(bytes(pending))
            pending.clear()
            self._skipping = False
            start = end + 1
        if not self._skipping:
            pending += chunk[start:]
            if len(pending) > self._limit:
                del pending[self._limit :]
                self._skipping = True

    def end(self) -> None:
        if self._on_line is not None and self._pending:
            self._on_line(bytes(self._pending))
            self._pending.clear()


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
    isolation: IsolationBackend | None = None,
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
    if isolation is not None:  # the same command, started inside the trial's namespaces
        argv = isolation.wrap(argv, cwd, env)
    started = time.monotonic()
    owner = supervisor()
    out = capture.stream() if on_stdout_line is None else None
    err = capture.stream() if not merge_stderr else None
    # Forked now, in this turn of the loop: the agent starts before whatever else is ready.
    child = Child(
        asyncio.get_running_loop(),
        owner.prepare(argv, env),
        cwd=cwd,
        env=env,
        stdin=stdin,
        stdout=_Stream(out, on_stdout_line, capture.limit),
        stderr=None if merge_stderr else _Stream(err, None, capture.limit),
    )
    owner.started(child.pid, env)
    timed_out = False
    try:
        # A timeout block, not wait_for: no task of its own, so no extra event-loop turns per command.
        # The leader's exit ends the wait (its group is killed then, see ._child), not its pipes': a
        # background child holding them could put that off until the deadline.
        async with asyncio.timeout(timeout_s):
            await asyncio.shield(child.exited)
    except TimeoutError:
        timed_out = True
        await _terminate(child)
    except BaseException:
        await asyncio.shield(_terminate(child))
        raise
    finally:
        await _drain(child)
        if child.exited.done():
            owner.waited(child.pid)
    if child.error is not None:
        raise child.error
    stdout = _finish(capture, out, name if merge_stderr else f"{name}.stdout")
    stderr = _finish(capture, err, f"{name}.stderr")
    return ProcessOutcome(
        returncode=None if timed_out else child.exited.result(),
        stdout=stdout,
        stderr=stderr,
        timed_out=timed_out,
        duration_ms=(time.monotonic() - started) * 1000,
    )


def _finish(capture: OutputCapture, stream: StreamCapture | None, name: str) -> bytes:
    if stream is None:
        return b""
    data = stream.finish()
    capture.record(name, stream)
    return data


async def _drain(child: Child) -> None:
    """Collect what the pipes still hold, then close them even if a process outside the group holds them."""
    try:
        if not child.drained.done():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(GRACE_S):
                    await asyncio.shield(child.drained)
    finally:
        child.close()
