"""Keeping a run in the shared history: synced before planning, appended and pushed after the run.

History trouble never fails the trials themselves: a failed sync before planning only makes cache
decisions less informed, and a failed append or push is kept on the report for the front end to show.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..history import HistoryError, HistoryLine, HistoryStore
from ..select import head_commit
from ._history import history_lines
from ._options import RunOptions

if TYPE_CHECKING:
    from ._run import RunReport

__all__ = ["ci_run_url", "pending_lines", "record", "sync"]


def sync(store: HistoryStore) -> str | None:
    """Bring in the shared history before planning; what went wrong, for the front end to say, or None.

    Planning with the local history is still right, only less informed, so a failure here does not stop
    the run; the push after the run tries again and reports.
    """
    try:
        store.sync()
    except HistoryError as exc:
        return str(exc)
    return None


def pending_lines(report: RunReport, options: RunOptions) -> list[HistoryLine]:
    """The history lines this run records: one per eval × agent with a finished trial."""
    return history_lines(
        report.results,
        commit=options.environ.get("GITHUB_SHA") or head_commit(options.repo),
        ci_run=ci_run_url(options),
        context={
            key: value
            for key, value in (
                ("ref", options.environ.get("GITHUB_REF", "")),
                ("event", options.environ.get("GITHUB_EVENT_NAME", "")),
            )
            if value
        },
        mask=report.masker.text,
    )


def record(report: RunReport, store: HistoryStore, options: RunOptions) -> None:
    """Append a line per finished eval × agent (and push when asked); failures go to ``report``."""
    # The lines already written into the run folder's manifest, when there is one: the same run ids.
    lines = report.history_lines if report.history_lines is not None else pending_lines(report, options)
    try:
        if lines:
            store.append(lines)
        if options.push:
            store.sync()
    except HistoryError as exc:
        report.history_error = str(exc)
    finally:
        report.history_problems = store.problems


def ci_run_url(options: RunOptions) -> str | None:
    """The GitHub Actions run page this run belongs to, when the environment names one."""
    env = options.environ
    if env.get("GITHUB_RUN_ID") and env.get("GITHUB_REPOSITORY"):
        server = env.get("GITHUB_SERVER_URL", "https://github.com")
        return f"{server}/{env['GITHUB_REPOSITORY']}/actions/runs/{env['GITHUB_RUN_ID']}"
    return None
