"""``trialbook list``: the plan, with the reason each eval × agent would run or not."""

from __future__ import annotations

from pathlib import Path

import click

from ..runner import RunOptions, run
from ._common import DEFAULT_HISTORY_DIR, env_option, history_place, paths_argument
from ._json import echo_json, plan_json
from ._output import render_plan
from .eval_cmd import _shard

__all__ = ["list_command"]


@click.command("list")
@paths_argument()
@env_option("--agent", multiple=True, metavar="NAME", help="Only this agent (repeatable).")
@env_option(
    "--filter", metavar="GLOB", multiple=True, help="Only evals whose id matches this glob (repeatable)."
)
@env_option("--shard", metavar="I/N", help="Only shard I of N.")
@env_option("--force", is_flag=True, help="Show cached evals as runnable.")
@env_option(
    "--history-dir",
    type=click.Path(file_okay=False),
    help=f"Read history (for `cached`) from DIR/<id>.jsonl [default: {DEFAULT_HISTORY_DIR} unless "
    "--history-branch is given].",
)
@env_option("--history-branch", metavar="NAME", help="Read history (for `cached`) from this git branch.")
@env_option("--last-failed", is_flag=True, help="Only the pairs that failed or errored in the latest run.")
@env_option(
    "--results-dir", type=click.Path(file_okay=False), help="The run folder --last-failed reads (CI)."
)
@click.option(
    "--json", "as_json", is_flag=True, help="Print the plan as JSON (docs/schemas/list.schema.json)."
)
def list_command(
    paths: tuple[str, ...],
    agent: tuple[str, ...],
    filter: tuple[str, ...],
    shard: str | None,
    force: bool,
    history_dir: str | None,
    history_branch: str | None,
    last_failed: bool,
    results_dir: str | None,
    as_json: bool,
) -> None:
    """List evals and agents, and whether each would run, with the reason.

    Which pairs are cached comes from the same history `trialbook eval` keeps (see --history-dir).
    """
    history_dir, history_branch = history_place(history_dir, history_branch)
    options = RunOptions(
        paths=tuple(Path(p) for p in paths) or (Path("evals"),),
        agents=agent,
        filters=filter,
        shard=_shard(shard),
        force=force,
        history_dir=Path(history_dir) if history_dir else None,
        history_branch=history_branch,
        last_failed=last_failed,
        results_dir=Path(results_dir) if results_dir else None,
        dry_run=True,
    )
    report = run(options)
    if as_json:
        echo_json(plan_json(report))
    else:
        click.echo(report.masker.text(render_plan(report)))
