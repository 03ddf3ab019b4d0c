"""Running an agent CLI for one trial: its process group, a deadline, early stops, no process left behind."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import IsolationBackend, OutputCapture
from ..sandbox.process import run_process
from ..sandbox.supervisor import TRIAL_MARKER, supervisor

__all__ = ["RUN_MARKER", "CliRun", "run_cli", "sweep"]

RUN_MARKER = TRIAL_MARKER
"""The variable that tags a run's processes: the trial's marker, or a fresh one for a bare adapter call."""


def sweep(marker: str) -> int:
    """Kill every process carrying ``RUN_MARKER=marker`` or descending from one; returns how many.

    Killing the CLI's process group is not enough: Claude Code starts its shell tool in a new session,
    so a command the agent left running in the background escapes the group. The environment is
    inherited across ``setsid``, so the marker still finds it (on Linux, through ``/proc``).
    """
    return supervisor().kill({marker}, set())


@dataclass(frozen=True)
class CliRun:
    """How one CLI run ended. ``aborted`` says why trialbook stopped it early (a hopeless retry loop)."""

    lines: tuple[str, ...]
    stderr: str
    returncode: int | None
    timed_out: bool
    aborted: str | None
    duration_ms: float


async def run_cli(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None,
    watch: Callable[[str], str | None],
    capture: OutputCapture | None = None,
    name: str = "cli",
    isolation: IsolationBackend | None = None,
) -> CliRun:
    """Run the CLI in its own process group; ``watch`` sees each stdout line and may return a reason to stop.

    Stopping early matters for failures the CLIs retry for minutes (a rejected key, an unreachable
    endpoint): the trial fails in seconds with the reason instead of waiting for its timeout.
    Standard error is masked and cut to ``capture``'s limit, recorded as ``name.stderr``.
    """
    lines: list[str] = []
    reasons: list[str] = []
    stop = asyncio.Event()

    def on_line(raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        lines.append(line)
        if not reasons and (reason := watch(line)) is not None:
            reasons.append(reason)
            stop.set()

    marker = env.get(RUN_MARKER) or uuid.uuid4().hex
    env = {**env, RUN_MARKER: marker}
    started = time.monotonic()
    process = asyncio.ensure_future(
        run_process(
            argv,
            cwd=cwd,
            env=env,
            timeout_s=timeout_s,
            on_stdout_line=on_line,
            capture=capture,
            name=name,
            isolation=isolation,
        )
    )
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({process, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        if not process.done():
            process.cancel()  # run_process kills the whole group before re-raising
        await asyncio.gather(process, return_exceptions=True)
        sweep(marker)
    duration_ms = (time.monotonic() - started) * 1000
    if process.cancelled():
        return CliRun(tuple(lines), "", None, False, reasons[0] if reasons else None, duration_ms)
    outcome = process.result()
    return CliRun(
        lines=tuple(lines),
        stderr=outcome.stderr.decode("utf-8", "replace"),
        returncode=outcome.returncode,
        timed_out=outcome.timed_out,
        aborted=None,
        duration_ms=outcome.duration_ms,
    )
