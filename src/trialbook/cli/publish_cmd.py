"""``trialbook publish``: the action's publish step — history, job summary, outputs, annotations, comment."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click

from ..errors import TrialbookError
from ..github import DEFAULT_LABEL, CiInputs, publish, report_stopped
from ..report.markdown import sticky_marker
from ._actions_step import ActionsStepCommand
from ._common import env_option

__all__ = ["publish_command"]


def _check_header(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # The action passes its `comment-header` input straight through: a bad one is a usage error (exit 2).
    if not value:
        return None
    try:
        sticky_marker(value)
    except ValueError as exc:
        raise click.BadParameter(f"{exc} (the action's `comment-header` input)") from None
    return value


def _stopped(args: Sequence[str], message: str) -> None:
    report_stopped(os.environ, message)


@click.command("publish", cls=ActionsStepCommand, stopped=_stopped)
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
@env_option(
    "--label",
    default=DEFAULT_LABEL,
    show_default=True,
    help="The run label a PR must carry to be commented on from a workflow_run event.",
)
@env_option(
    "--comment-header",
    callback=_check_header,
    metavar="NAME",
    help="Name of the sticky PR comment (1-64 letters, digits, spaces, . _ -): workflows with different "
    "names keep separate comments.",
)
@click.option(
    "--evals",
    "evals",
    multiple=True,
    type=click.Path(path_type=Path),
    help="Eval files or folders of this checkout (default: evals): the pairs a run may record history "
    "for. Repeatable.",
)
@click.option(
    "--agent", "agents", multiple=True, help="An agent the run step added with --agent. Repeatable."
)
def publish_command(
    folders: tuple[Path, ...],
    results_dir: Path,
    history_branch: str,
    github_token: str | None,
    label: str,
    comment_header: str | None,
    evals: tuple[Path, ...],
    agents: tuple[str, ...],
) -> None:
    """Publish what `trialbook ci --stage run` left in one or more results folders.

    Several folders (the shards of a matrix, downloaded as artifacts) publish as one run: one set of
    history lines pushed once, one job summary, one PR comment. Runs no agent. The comment is found by
    its marker and its author (the token's own identity) and names the commit it reflects. A push that
    cannot land or a comment that cannot be posted is a warning; the exit code is the run's own (0, 1, 2,
    3, or 130/143 for a cancelled run).

    On a workflow_run event (publishing a fork's pull request run) the folders are treated as untrusted
    data: their history lines are not recorded, and the comment goes to the open PR GitHub's payload
    names, only when it carries --label. Any other run's folders are checked before anything is
    published: history lines only for eval × agent pairs the eval files at --evals define, marked with
    this workflow run's event and ref, and no workflow command in any text; a folder that fails a check
    is refused whole (exit code 1).
    """
    inputs = CiInputs(
        paths=evals or (Path("evals"),),
        agents=agents,
        results_dir=results_dir,
        history_branch=history_branch,
        github_token=github_token,
        comment_header=comment_header,
        label=label,
    )
    try:
        code = publish(os.environ, inputs, folders).exit_code
    except TrialbookError as exc:
        # A folder that is no run's hand-over, a ci.json that does not decode: said where people look.
        report_stopped(os.environ, str(exc))
        raise
    raise SystemExit(code)
