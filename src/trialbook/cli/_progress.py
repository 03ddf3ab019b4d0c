"""Live progress: a line per finished trial, the evidence under a failed one, a status line on a TTY.

On a TTY the trial lines are coloured (``NO_COLOR`` turns that off, ``FORCE_COLOR`` on anywhere) and a
status line on stderr shows done/running/waiting, the elapsed time, an ETA and the running pairs,
redrawn every second. Off a TTY nothing but plain lines is written — no colour, no carriage returns —
so CI logs stay readable and diffable: one line when a trial starts, one when it ends. In GitHub Actions
the evidence under a failed trial is a collapsible ``::group::`` titled by the trial's line.

Every line is at most :data:`WIDTH` columns (the terminal's width when narrower), so a failure always
fits on one line.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from ..masking import Masker
from ..report.terminal import fit, visible
from ._status import RunningTrial, StatusCounts, colour_wanted, eta_seconds, status_line

if TYPE_CHECKING:  # the runner is imported by the command that runs, not by importing this module
    from ..runner import TrialFinished, TrialStarted

__all__ = ["WIDTH", "TerminalProgress"]

WIDTH = 160
"""Longest line progress prints; a narrower terminal's width wins."""
DETAIL_INDENT = "    "
TICK_S = 1.0
"""How often the status line's clock is redrawn."""

_RED, _GREEN, _YELLOW, _DIM, _BOLD, _RESET = (
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[33m",
    "\x1b[2m",
    "\x1b[1m",
    "\x1b[0m",
)
_CLEAR_LINE = "\r\x1b[K"


def _cut(text: str, width: int) -> str:
    return fit(" ".join(text.split()), width)


def _not_a_command(line: str) -> str:
    # A line that starts with "::" would be read by the Actions runner as a workflow command.
    return ": :" + line[2:] if line.lstrip().startswith("::") else line


class TerminalProgress:
    """A :class:`~trialbook.runner.ProgressSink` for people (TTY) and for logs (CI)."""

    def __init__(
        self,
        masker: Masker | None = None,
        *,
        live: bool | None = None,
        colour: bool | None = None,
        concurrency: int | None = None,
        out: TextIO | None = None,
        err: TextIO | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.masker = masker or Masker()
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        environ = os.environ if environ is None else environ
        self.live = _isatty(self.err) if live is None else live
        self.colour = colour_wanted(environ, _isatty(self.out)) if colour is None else colour
        self.github = environ.get("GITHUB_ACTIONS") == "true" and not self.live
        self.concurrency = concurrency
        self._lock = threading.Lock()
        self._running: dict[tuple[str, str, int], RunningTrial] = {}
        self._durations: list[float] = []
        self._waiting = 0
        self._done = 0
        self._started_at: float | None = None
        self._status = ""
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()

    # -- the sink -------------------------------------------------------------------------------------

    def trial_started(self, event: TrialStarted) -> None:
        """Track the trial; redraw the status line on a TTY, or write a plain start line off one."""
        with self._lock:
            now = time.monotonic()
            if self._started_at is None:
                self._started_at = now
                self._start_ticker()
            key = (event.eval_id, event.agent, event.trial)
            self._running[key] = RunningTrial(event.eval_id, event.agent, event.trial, now)
            self._waiting = event.remaining
            if self.live:
                self._draw_status()
            else:
                where = f"{event.eval_id} [{event.agent}] trial {event.trial}"
                self._write(
                    self.out, self._fit(f"start {where} ({event.running} running, {event.remaining} waiting)")
                )

    def trial_finished(self, event: TrialFinished) -> None:
        """Print the trial's line, and for a failed trial the evidence under it."""
        with self._lock:
            self._running.pop((event.eval_id, event.agent, event.trial), None)
            self._durations.append(event.duration_s)
            self._done = event.done
            self._clear_status()
            where = f"{event.eval_id} [{event.agent}] trial {event.trial}"
            line = self._fit(self.masker.text(f"[{event.done}/{event.total}] {where}: {event.summary}"))
            details = [self._fit(DETAIL_INDENT + self.masker.text(d)) for d in event.details]
            if self.github and details:
                from ..github import escape_data

                self._write(self.out, f"::group::{escape_data(line)}")
                for detail in details:
                    self._write(self.out, _not_a_command(detail))
                self._write(self.out, "::endgroup::")
            else:
                self._write(self.out, self._paint(line, event))
                for detail in details:
                    self._write(self.out, self._dim(detail))
            if self.live and self._running:
                self._draw_status()
            if event.done >= event.total:
                self._stop.set()

    # -- drawing --------------------------------------------------------------------------------------

    def _width(self) -> int:
        if not (self.live or _isatty(self.out)):
            return WIDTH
        return max(20, min(WIDTH, shutil.get_terminal_size((WIDTH, 24)).columns))

    def _fit(self, text: str) -> str:
        # Agent output is evidence to read, never a control sequence for the terminal (see visible).
        text = visible(text)
        return (
            _cut(text, self._width())
            if not text.startswith(DETAIL_INDENT)
            else DETAIL_INDENT + _cut(text[len(DETAIL_INDENT) :], self._width() - len(DETAIL_INDENT))
        )

    def _paint(self, line: str, event: TrialFinished) -> str:
        if not self.colour:
            return line
        if event.passed:
            return line.replace(": pass (", f": {_GREEN}pass{_RESET} (", 1)
        colour = _YELLOW if event.stop_reason not in (None, "completed") else _RED
        return line.replace(": FAIL (", f": {_BOLD}{colour}FAIL{_RESET} (", 1)

    def _dim(self, line: str) -> str:
        return f"{_DIM}{line}{_RESET}" if self.colour else line

    def _status_text(self) -> str:
        now = time.monotonic()
        running = list(self._running.values())
        parallel = self.concurrency or max(len(running), 1)
        eta = eta_seconds(self._durations, running, self._waiting, now=now, parallel=parallel)
        counts = StatusCounts(self._done, len(running), self._waiting)
        elapsed = now - (self._started_at or now)
        text = status_line(counts, elapsed=elapsed, eta=eta, running=running, width=self._width() - 1)
        return self.masker.text(text)

    def _draw_status(self) -> None:
        self._status = self._status_text()
        shown = f"{_DIM}{self._status}{_RESET}" if self.colour else self._status
        self.err.write(_CLEAR_LINE + shown)
        self.err.flush()

    def _clear_status(self) -> None:
        if self.live and self._status:
            self.err.write(_CLEAR_LINE)
            self.err.flush()
            self._status = ""

    def _write(self, stream: TextIO, line: str) -> None:
        stream.write(line + "\n")
        stream.flush()

    # -- the clock ------------------------------------------------------------------------------------

    def _start_ticker(self) -> None:
        if not self.live or self._ticker is not None:
            return
        self._ticker = threading.Thread(target=self._tick, name="trialbook-status", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                if self._running:
                    self._draw_status()

    def close(self) -> None:
        """Stop the clock and clear the status line (the run is over)."""
        self._stop.set()
        with self._lock:
            self._clear_status()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
