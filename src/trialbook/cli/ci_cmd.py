"""``trialbook ci``: the GitHub Action's entry point — decide from the event, run, report back."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import click

from ..errors import ExitCode, TrialbookError
from ..github import (
    DEFAULT_LABEL,
    CiInputs,
    CiState,
    fetch_history,
    hand_over_error,
    reexec_without_tokens,
    report_stopped,
    run_ci,
    run_stage,
    token_variables,
)
from ..runner import handle_signals
from ..sandbox import ISOLATIONS
from ..select import parse_shard
from ._actions_step import ActionsStepCommand, probe_option
from ._common import env_option, paths_argument, rescore_from_option
from ._output import emit_report
from ._progress import TerminalProgress

__all__ = ["ci_command"]


def _check_shard(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    # The action passes its `shard` input straight through: a typo there must be a usage error (exit 2),
    # not a traceback from deep inside the run.
    if value:
        try:
            parse_shard(value)
        except ValueError as exc:
            raise click.BadParameter(f"{exc} (the action's `shard` input)") from None
    return value or None


def _stopped(args: Sequence[str], message: str) -> None:
    """A usage error inside Actions: the run stage hands it over in ci.json, other stages report it."""
    if os.environ.get("GITHUB_ACTIONS") != "true":
        return
    if probe_option(args, "--stage", "TRIALBOOK_STAGE", "all") == "run":
        results = probe_option(args, "--results-dir", "TRIALBOOK_RESULTS_DIR", ".trialbook/results")
        refused = CiState(
            reason="the run step's options were refused",
            ran=False,
            comment=False,
            push=False,
            exit_code=ExitCode.BAD_INPUT,
            error=message,
        )
        if results is not None and hand_over_error(Path(results), refused):
            return  # the publish step shows it, with the summary it writes anyway
    report_stopped(os.environ, message)


@click.command("ci", cls=ActionsStepCommand, stopped=_stopped)
@paths_argument()
@env_option(
    "--stage",
    type=click.Choice(["all", "fetch", "run"]),
    default="all",
    show_default=True,
    help="fetch: bring in the history branch (token); run: run with no token and leave ci.json for "
    "`trialbook publish`; all: fetch, run and publish in one process.",
)
@env_option(
    "--agent", multiple=True, metavar="NAME", help="Run only this agent (repeatable, or space-separated)."
)
@env_option(
    "--budget-usd", type=click.FloatRange(min=0), help="Stop starting new trials once this much is spent."
)
@env_option("--force/--no-force", default=None, help="Re-run cached evals (default: the event decides).")
@env_option(
    "--changed/--all", default=None, help="Run only evals changed against --base (default: on for PRs)."
)
@env_option("--base", default=None, help="Ref to compare with (default: the PR's base branch).")
@env_option("--history-branch", default="trialbook-results", show_default=True, help="History branch.")
@env_option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="Trials at once.")
@env_option("--shard", metavar="I/N", callback=_check_shard, help="Run only shard I of N.")
@env_option(
    "--results-dir", type=click.Path(file_okay=False), default=".trialbook/results", show_default=True
)
@env_option("--comment/--no-comment", default=None, help="Post the sticky PR comment (default: on for PRs).")
@env_option("--github-token", help="Token for pushing history and the PR comment.", show_envvar=True)
@env_option("--label", default=DEFAULT_LABEL, show_default=True, help="The PR label that asks for a run.")
@env_option(
    "--isolation",
    type=click.Choice(ISOLATIONS),
    help="Run every eval's trials under this isolation (docs/isolation.md); the action passes auto.",
)
@env_option(
    "--strict-agents",
    is_flag=True,
    help="Refuse the run when an agent cannot run here, instead of ending its pairs as errors.",
)
@rescore_from_option(
    "An earlier results folder (a downloaded artifact): pairs whose trials it holds and whose "
    "assertions alone changed are re-checked instead of run (repeatable)."
)
def ci_command(
    paths: tuple[str, ...],
    stage: str,
    agent: tuple[str, ...],
    budget_usd: float | None,
    force: bool | None,
    changed: bool | None,
    base: str | None,
    history_branch: str,
    concurrency: int,
    shard: str | None,
    results_dir: str,
    comment: bool | None,
    github_token: str | None,
    label: str,
    isolation: str | None,
    strict_agents: bool,
    rescore_from: tuple[str, ...],
) -> None:
    """Run evals as the GitHub Actions event asks: changed prompts on a labelled PR, moved cache keys nightly.

    With --stage all it also writes the job summary, the step outputs and error annotations, updates one
    sticky PR comment, and pushes history with the token. The action instead runs --stage fetch, then
    --stage run with no token (agents can read every environment of their user), then `trialbook
    publish`. Outside GitHub Actions this refuses to run (exit 2).
    """
    inputs = CiInputs(
        paths=tuple(Path(p) for p in paths) or (Path("evals"),),
        agents=agent,
        budget_usd=budget_usd,
        force=force,
        changed=changed,
        base=base,
        history_branch=history_branch,
        concurrency=concurrency,
        shard=shard,
        results_dir=Path(results_dir),
        comment=comment,
        github_token=github_token,
        label=label,
        strict_agents=strict_agents,
        isolation=isolation,
        rescore_from=tuple(Path(folder) for folder in rescore_from),
    )
    if stage == "fetch":
        try:
            fetched = fetch_history(os.environ, inputs).exit_code
        except TrialbookError as exc:
            report_stopped(os.environ, str(exc))
            raise
        raise SystemExit(fetched)
    if stage == "run":
        # Before anything else (an eval file, an agent): no token in this process's own environment.
        # Only a real process re-executes itself; a library or test caller gets the refusal below.
        argv = (click.get_current_context().find_root().obj or {}).get("argv")
        if argv is not None:
            reexec_without_tokens(argv)
        held = token_variables(os.environ) or (["--github-token"] if github_token else [])
        if held:
            # The run stage exists so agents never share a process tree with the token.
            raise click.UsageError(
                f"--stage run runs agents and must not hold a GitHub token ({', '.join(held)}): give "
                "the token to the fetch and publish steps only"
            )
    with handle_signals() as cancel:
        code = _run_and_report(inputs, stage)
    raise SystemExit(cancel.exit_code or code)


def _run_and_report(inputs: CiInputs, stage: str) -> int:
    progress = TerminalProgress(concurrency=inputs.concurrency)
    if stage == "run":
        outcome, _ = run_stage(os.environ, inputs, progress)
    else:
        outcome = run_ci(os.environ, inputs, progress)
    if outcome.report is not None and outcome.options is not None:
        written = emit_report(outcome.report, outcome.options)
        return outcome.exit_code or written  # 1 where the run passed but a report file was not written
    return outcome.exit_code
