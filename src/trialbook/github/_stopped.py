"""A step that stops before it reports (bad input, a refusal) still leaves a trace where people look.

Inside GitHub Actions the log is the last place anyone reads: an exit code 2 with its message only there
looks like a crash. So a stopped step says why in the job summary and as an ``::error`` annotation, and
a run step that stops leaves its error in ``ci.json`` instead, for the publish step (or the publish job of
a matrix) to show with everything else.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path

from ..errors import TrialbookError
from ..runner import claim
from ._commands import emit_annotation
from ._files import write_summary
from ._state import CiState, write_state

__all__ = ["TITLE", "hand_over_error", "report_stopped"]

TITLE = "trialbook evals"
"""The heading of every job summary section trialbook writes."""


def report_stopped(environ: Mapping[str, str], message: str) -> None:
    """Write ``message`` as an ``::error`` and a job summary section, when running inside Actions.

    Outside Actions nothing is written: the message is on the terminal already.
    """
    if environ.get("GITHUB_ACTIONS") != "true":
        return
    emit_annotation("error", message)
    summary = environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        # The annotation above is the trace; a summary file that cannot be written adds nothing.
        with contextlib.suppress(OSError):
            write_summary(Path(summary), f"## {TITLE}\n\nThe step stopped: {message}\n")


def hand_over_error(results_dir: Path, state: CiState) -> bool:
    """Leave a run step's error as ``ci.json`` in its results folder; whether it could be written.

    A results folder that is not trialbook's stays untouched: the error itself is what matters, and the
    caller still exits with it.
    """
    try:
        claim(results_dir, "ci")
        write_state(results_dir, state)
    except (TrialbookError, OSError):
        return False
    return True
