"""What a finished CI run hands back to Actions: the action's outputs and annotations on failing evals.

These are the values ``action.yml`` declares, computed here so their names and formats live next to the
code that writes them rather than in YAML.
"""

from __future__ import annotations

import signal
from collections.abc import Mapping, Sequence

from ..report import ReviewRow
from ._commands import annotation

__all__ = ["ANNOTATION_LIMIT", "action_outputs", "cancellation_message", "failure_annotations"]

ANNOTATION_LIMIT = 10
"""GitHub shows at most ten error annotations per step; the rest only clutter the log."""


def action_outputs(
    *, passed: int, failed: int, cached: int, cost_usd: float | None, summary: str
) -> dict[str, str]:
    """The step outputs ``action.yml`` exposes, as the strings Actions stores.

    An unknown cost is the empty string, never ``0``, so a workflow can tell "free" from "not reported".
    """
    return {
        "passed": str(passed),
        "failed": str(failed),
        "cached": str(cached),
        "cost-usd": "" if cost_usd is None else f"{cost_usd:.4f}",
        "summary": summary,
    }


def failure_annotations(
    rows: Sequence[ReviewRow],
    files: Mapping[str, str],
    *,
    lines: Mapping[str, int] | None = None,
    limit: int = ANNOTATION_LIMIT,
) -> list[str]:
    """``::error`` commands for every eval × agent that did not pass, attached to its eval file.

    Cached rows count like the others: a failure recorded earlier for the same content is still a failure,
    and the annotation says which run recorded it and its first reason.

    Args:
        rows: the rows of this run.
        files: eval id → eval file path relative to the repository root (``GITHUB_WORKSPACE``); rows
            whose file is unknown get an annotation without a file.
        lines: eval id → line to point at (for example the ``assert:`` key), when known.
        limit: how many annotations to emit; one more says how many were left out.
    """
    failing = [row for row in rows if row.verdict != "pass"]
    commands: list[str] = []
    for row in failing[:limit]:
        test = row.regression
        regressed = (
            f", regressed from {row.base.passed}/{row.base.trials}"
            if row.base and test and test.regressed
            else ""
        )
        cached = f", {row.note}, not re-run" if row.cached else ""
        first = row.failures[0].splitlines()[0] if row.failures else ""
        reason = f" {first}" if first else ""
        commands.append(
            annotation(
                "error",
                f"{row.passed}/{row.trials} trials passed ({row.verdict}{regressed}{cached}).{reason} "
                "The job summary and the results artifact have the transcripts.",
                file=files.get(row.eval_id),
                line=(lines or {}).get(row.eval_id),
                title=f"{row.eval_id} × {row.agent}: {row.verdict}",
            )
        )
    if len(failing) > limit:
        commands.append(
            annotation("error", f"{len(failing) - limit} more evals did not pass; see the job summary.")
        )
    return commands


def cancellation_message(exit_code: int) -> str | None:
    """What the summary and ``::error`` say of a run step a signal stopped (exit code ``128 + signal``)."""
    try:
        name = signal.Signals(exit_code - 128).name if exit_code > 128 else None
    except ValueError:
        name = None
    if name is None:
        return None
    return (
        f"The run was cancelled by {name} (exit code {exit_code}): trials that had not finished were "
        "stopped and count as not run, so their evals are incomplete; what finished is reported here."
    )
