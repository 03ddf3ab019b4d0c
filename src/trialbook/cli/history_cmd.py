"""``trialbook history``: recent verdicts per eval × agent, as a trend."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Sequence
from pathlib import Path

import click

from ..history import HistoryLine, open_store
from ..report.history_view import history_json, render_history
from ..scoring.flaky import WINDOW
from ._common import DEFAULT_HISTORY_DIR, env_option, history_place

__all__ = ["history_command", "read_history"]


def read_history(
    history_dir: str | None, history_branch: str | None, filter: Sequence[str] = ()
) -> tuple[dict[tuple[str, str], list[HistoryLine]], Sequence[str]]:
    """Every history line per (eval id, agent), with the store's problems (unreadable lines) beside."""
    store = open_store(
        history_dir=Path(history_dir) if history_dir else None,
        history_branch=history_branch,
        repo_path=Path(),
        push=False,
        token=None,
    )
    assert store is not None
    try:
        grouped: dict[tuple[str, str], list[HistoryLine]] = {}
        for eval_id in store.ids():
            if filter and not any(fnmatch.fnmatch(eval_id, glob) for glob in filter):
                continue
            for line in store.read(eval_id):
                grouped.setdefault((line.id, line.agent), []).append(line)
        problems: Sequence[str] = store.problems
    finally:
        store.close()
    return grouped, problems


@click.command("history")
@env_option(
    "--history-dir",
    type=click.Path(file_okay=False),
    help=f"Read history from DIR/<id>.jsonl files [default: {DEFAULT_HISTORY_DIR} unless --history-branch "
    "is given].",
)
@env_option("--history-branch", metavar="NAME", help="Read history from this git branch (local or origin's).")
@env_option(
    "--filter", metavar="GLOB", multiple=True, help="Only evals whose id matches this glob (repeatable)."
)
@click.option(
    "--last",
    "last_n",
    type=click.IntRange(min=1),
    default=None,
    help=f"Runs per trend [default: 10; {WINDOW} with --flaky, the window verdicts are compared with].",
)
@click.option(
    "--flaky", is_flag=True, help="List only the eval × agent pairs that are flaky on the base branch."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for machines instead of the table.")
def history_command(
    history_dir: str | None,
    history_branch: str | None,
    filter: tuple[str, ...],
    last_n: int | None,
    flaky: bool,
    as_json: bool,
) -> None:
    """Show each eval × agent's recent verdicts: pass-rate trend, agent version changes, cost, stability.

    Stability is judged on base-branch runs (pull-request runs are left out): ``stable-pass``,
    ``stable-fail``, ``flaky``, ``regressed at <commit>`` or ``recovered at <commit>``
    (``insufficient-data`` below three runs), with the pooled trials passed and their 95% interval.
    """
    window = last_n if last_n is not None else (WINDOW if flaky else 10)
    history_dir, history_branch = history_place(history_dir, history_branch)
    if history_dir is not None and not Path(history_dir).is_dir():
        click.echo(
            f"no history in {history_dir} yet: `trialbook eval` keeps it there; give --history-branch "
            "NAME (for example trialbook-results) to read CI's history",
            err=True,
        )
        return
    grouped, problems = read_history(history_dir, history_branch, filter)
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    if as_json:
        out = history_json(grouped, last_n=window, flaky=flaky)
        click.echo(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        click.echo(render_history(grouped, last_n=window, flaky=flaky), nl=False)
