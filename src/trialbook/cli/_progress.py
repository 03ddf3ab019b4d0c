"""Live progress for the terminal: one line per finished trial, and a status line on a TTY."""

from __future__ import annotations

import sys

import click

from ..masking import Masker
from ..runner import TrialFinished, TrialStarted

__all__ = ["TerminalProgress"]


class TerminalProgress:
    """Prints a line for each finished trial; on a TTY also keeps a live status line on stderr."""

    def __init__(self, masker: Masker | None = None, *, live: bool | None = None) -> None:
        self.masker = masker or Masker()
        self.live = sys.stderr.isatty() if live is None else live
        self._status = ""

    def _clear(self) -> None:
        if self.live and self._status:
            click.echo("\r" + " " * len(self._status) + "\r", nl=False, err=True)

    def trial_started(self, event: TrialStarted) -> None:
        """Refresh the status line."""
        if self.live:
            self._clear()
            self._status = (
                f"running {event.running}, {event.remaining} waiting — {event.eval_id} [{event.agent}]"
            )
            click.echo(self.masker.text(self._status), nl=False, err=True)

    def trial_finished(self, event: TrialFinished) -> None:
        """Print the trial's outcome line."""
        self._clear()
        self._status = ""
        where = f"{event.eval_id} [{event.agent}] trial {event.trial}"
        line = f"[{event.done}/{event.total}] {where}: {event.summary}"
        click.echo(self.masker.text(line))
