"""What the live status line says, and whether to colour it (pure: no terminal is touched here).

The status line is for a person watching a TTY: how many trials are done, running and waiting, how long
the run has taken, when it should end, and which pairs are running now. The estimate comes from the
trials that finished: the mean duration times the work left, spread over the trials that run at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["RunningTrial", "StatusCounts", "colour_wanted", "eta_seconds", "format_clock", "status_line"]


@dataclass(frozen=True)
class RunningTrial:
    """A trial that has started and not finished, with when it started (monotonic seconds)."""

    eval_id: str
    agent: str
    trial: int
    started: float


@dataclass(frozen=True)
class StatusCounts:
    """Where the run stands."""

    done: int
    running: int
    waiting: int


def colour_wanted(environ: Mapping[str, str], is_tty: bool) -> bool:
    """Colour on a TTY unless ``NO_COLOR`` is set; ``FORCE_COLOR`` turns it on anywhere (no-color.org)."""
    if environ.get("NO_COLOR"):
        return False
    force = environ.get("FORCE_COLOR")
    if force is not None and force != "":
        return force.lower() not in ("0", "false", "no")
    return is_tty


def format_clock(seconds: float) -> str:
    """``0:42``, ``12:05``, ``1:02:09``."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def eta_seconds(
    durations: Sequence[float],
    running: Sequence[RunningTrial],
    waiting: int,
    *,
    now: float,
    parallel: int,
) -> float | None:
    """Seconds until the run ends, from finished trials' mean duration; ``None`` before any finished.

    A running trial is expected to take the mean too, less what it has run already (never below zero);
    the waiting trials share ``parallel`` slots.
    """
    if not durations:
        return None
    mean = sum(durations) / len(durations)
    left_running = [max(mean - (now - trial.started), 0.0) for trial in running]
    work = sum(left_running) + waiting * mean
    slots = max(parallel, 1)
    # The run cannot end before its longest running trial does.
    return max(work / slots, max(left_running, default=0.0))


def status_line(
    counts: StatusCounts,
    *,
    elapsed: float,
    eta: float | None,
    running: Sequence[RunningTrial],
    width: int,
) -> str:
    """One line, at most ``width`` characters: counts, elapsed, ETA, then as many running pairs as fit."""
    eta_text = f"ETA {format_clock(eta)}" if eta is not None else "ETA after the first trial"
    head = (
        f"{counts.done} done · {counts.running} running · {counts.waiting} waiting · "
        f"{format_clock(elapsed)} elapsed · {eta_text}"
    )
    names = [f"{t.eval_id} [{t.agent}] #{t.trial}" for t in sorted(running, key=lambda t: t.started)]
    line = head
    for index, name in enumerate(names):
        more = len(names) - index - 1
        candidate = f"{line}{' — ' if index == 0 else ', '}{name}"
        suffix = f", +{more} more" if more else ""
        if len(candidate + suffix) > width:
            rest = len(names) - index
            tail = f"{' — ' if index == 0 else ', '}+{rest} running"
            line = line + tail if len(line + tail) <= width else line
            break
        line = candidate
    return line if len(line) <= width else line[: max(width - 1, 0)] + "…"
