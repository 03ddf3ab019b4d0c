"""``trialbook publish``: the action's publish step — history, job summary, outputs, annotations, comment."""

from __future__ import annotations

import os
from pathlib import Path

import click

from ..github._ci import CiInputs, publish
from ._common import env_option

__all__ = ["publish_command"]


@click.command("publish")
@click.argument(
    "folders", nargs=-1, type=click.Path(file_okay=False, path_type=Path), metavar="[RESULTS_DIRS]..."
)
@env_option(
    "--results-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=".trialbook/results",
    show_default=True,
    help="The results folder to publish when no RESULTS_DIRS are given.",
)
@env_option("--history-branch", default="trialbook-results", show_default=True, help="History branch.")
@env_option("--github-token", help="Token for pushing history and the PR comment.", show_envvar=True)
def publish_command(
    folders: tuple[Path, ...], results_dir: Path, history_branch: str, github_token: str | None
) -> None:
    """Publish what `trialbook ci --stage run` left in one or more results folders.

    Several folders (the shards of a matrix, downloaded as artifacts) publish as one run: one set of
    history lines pushed once, one job summary, one PR comment. Runs no agent. A push that cannot land
    or a comment that cannot be posted is a warning; the exit code is the run's own (0, 1, 2 or 3).
    """
    inputs = CiInputs(results_dir=results_dir, history_branch=history_branch, github_token=github_token)
    raise SystemExit(publish(os.environ, inputs, folders).exit_code)
