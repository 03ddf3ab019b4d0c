"""``trialbook list``: the plan, with the reason each eval × agent would run or not."""

from __future__ import annotations

from pathlib import Path

import click

from ..runner import RunOptions, run
from ._common import env_option, paths_argument
from ._output import render_plan
from .eval_cmd import _shard

__all__ = ["list_command"]


@click.command("list")
@paths_argument()
@env_option("--agent", multiple=True, metavar="NAME", help="Only this agent (repeatable).")
@env_option("--filter", metavar="GLOB", help="Only evals whose id matches this glob.")
@env_option("--shard", metavar="I/N", help="Only shard I of N.")
@env_option("--force", is_flag=True, help="Show cached evals as runnable.")
def list_command(
    paths: tuple[str, ...], agent: tuple[str, ...], filter: str | None, shard: str | None, force: bool
) -> None:
    """List evals and agents, and whether each would run, with the reason."""
    options = RunOptions(
        paths=tuple(Path(p) for p in paths) or (Path("evals"),),
        agents=agent,
        filter=filter,
        shard=_shard(shard),
        force=force,
        dry_run=True,
    )
    click.echo(render_plan(run(options)))
