"""``trialbook eval``: run evals and report."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from ..errors import UsageError
from ..history import DEFAULT_CONNECT_TIMEOUT_S, DEFAULT_IDLE_TIMEOUT_S
from ..runner import RunOptions, SilentSink, handle_signals, run
from ..sandbox import ISOLATIONS
from ..select import parse_shard
from ._common import DEFAULT_HISTORY_DIR, env_option, history_place, paths_argument, rescore_from_option
from ._output import emit_report
from ._progress import TerminalProgress

__all__ = ["eval_command", "run_options"]

F = TypeVar("F", bound=Callable[..., Any])


def _shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        return parse_shard(value)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _path(value: object) -> Path | None:
    return Path(str(value)) if value else None


def run_options(params: Mapping[str, Any]) -> RunOptions:
    """Build :class:`RunOptions` from the click parameters of ``eval``."""
    paths = tuple(Path(p) for p in params["paths"]) or (Path("evals"),)
    history_dir, history_branch = history_place(
        params["history_dir"], params["history_branch"], recording=not params["dry_run"]
    )
    return RunOptions(
        paths=paths,
        agents=tuple(params["agent"]),
        trials=params["trials"],
        adaptive=params["adaptive"],
        concurrency=params["concurrency"],
        budget_usd=params["budget_usd"],
        budget_strict=params["budget_strict"],
        force=params["force"],
        changed=params["changed"],
        base=params["base"],
        history_dir=_path(history_dir),
        history_branch=history_branch,
        push=params["push"],
        github_token=params["github_token"],
        git_connect_timeout_s=params["git_connect_timeout"],
        git_timeout_s=params["git_timeout"],
        results_dir=_path(params["results_dir"]),
        keep_runs=params["keep_runs"],
        junit=_path(params["junit"]),
        summary=_path(params["summary"]),
        filters=tuple(params["filter"]),
        last_failed=params["last_failed"],
        shard=_shard(params["shard"]),
        dry_run=params["dry_run"],
        unsafe_local=params["unsafe_local"],
        strict_agents=params["strict_agents"],
        isolation=params["isolation"],
        keep_sandboxes=params["keep_sandboxes"],
        rescore_from=tuple(Path(folder) for folder in params["rescore_from"]),
    )


def _trial_options() -> list[Callable[[F], F]]:
    """Which agents and trials run, how many at once, and what they may cost."""
    return [
        env_option(
            "--agent",
            multiple=True,
            metavar="NAME",
            help="Run only this agent (repeatable): a registered agent, or one an eval defines (script "
            "agents too). A registered agent the eval does not list runs with default options.",
        ),
        env_option("--trials", type=click.IntRange(min=1), help="Override every eval's number of trials."),
        env_option(
            "--isolation",
            type=click.Choice(ISOLATIONS),
            help="Run every eval's trials under this isolation, whatever its sandbox.isolation says "
            "(bwrap: the system read-only, the host's home and temp folders hidden; docs/isolation.md).",
        ),
        env_option(
            "--strict-agents",
            is_flag=True,
            help="Refuse the run when an agent cannot run here (not installed, no credentials), instead of "
            "running the other agents and ending its pairs as errors.",
        ),
        env_option(
            "--adaptive",
            is_flag=True,
            help="Run trials in waves and stop each eval × agent once its verdict is decided "
            "(at least 3 trials unless the eval sets trials: {min: M}).",
        ),
        env_option(
            "--concurrency",
            type=click.IntRange(min=1),
            default=4,
            show_default=True,
            help="Trials running at once.",
        ),
        env_option(
            "--budget-usd",
            type=click.FloatRange(min=0),
            help="Stop starting new trials once this much has been spent.",
        ),
        env_option(
            "--budget-strict",
            is_flag=True,
            help="Exit 3 before any trial when the forecast from history is above --budget-usd.",
        ),
        env_option("--force", is_flag=True, help="Run evals even when history says the result is cached."),
        env_option(
            "--changed",
            is_flag=True,
            help="Run only evals whose rendered prompt or definition differs from --base.",
        ),
        env_option(
            "--base", default="origin/main", show_default=True, help="Git ref --changed compares against."
        ),
    ]


def _history_options() -> list[Callable[[F], F]]:
    """Where verdicts are kept and how the history remote is reached."""
    return [
        env_option(
            "--history-dir",
            type=click.Path(file_okay=False),
            help=f"Keep history as DIR/<id>.jsonl files [default: {DEFAULT_HISTORY_DIR} outside CI, "
            "unless --history-branch is given].",
        ),
        env_option(
            "--history-branch",
            metavar="NAME",
            help="Keep history on this orphan git branch (e.g. trialbook-results).",
        ),
        env_option(
            "--push/--no-push",
            default=False,
            show_default=True,
            help="Push the history branch to origin after the run.",
        ),
        env_option(
            "--git-connect-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=DEFAULT_CONNECT_TIMEOUT_S,
            show_default=True,
            metavar="SECONDS",
            help="Seconds to wait for a connection to the history remote.",
        ),
        env_option(
            "--git-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=DEFAULT_IDLE_TIMEOUT_S,
            show_default=True,
            metavar="SECONDS",
            help="Seconds to wait for each answer of the history remote before a fetch or push fails.",
        ),
    ]


def _output_options() -> list[Callable[[F], F]]:
    """Where the run's files go, which evals it selects, and the switches that change what runs."""
    return [
        env_option(
            "--results-dir",
            type=click.Path(file_okay=False),
            help="Write this run's folder here (replacing the previous run there, for CI) instead of a "
            "new kept run under .trialbook/runs/.",
        ),
        env_option(
            "--keep-runs",
            type=click.IntRange(min=1),
            default=20,
            show_default=True,
            metavar="N",
            help="Kept runs under .trialbook/runs/: the oldest beyond N are removed.",
        ),
        env_option("--junit", type=click.Path(dir_okay=False), help="Also write JUnit XML here."),
        env_option("--summary", type=click.Path(dir_okay=False), help="Also write a Markdown summary here."),
        env_option(
            "--filter",
            metavar="GLOB",
            multiple=True,
            help="Run only evals whose id matches this glob (repeatable: any of them); one matching no "
            "eval is an error.",
        ),
        env_option(
            "--last-failed",
            is_flag=True,
            help="Run only the eval × agent pairs that failed or errored in the latest run.",
        ),
        env_option("--shard", metavar="I/N", help="Run only shard I of N (deterministic across machines)."),
        env_option(
            "--dry-run", is_flag=True, help="Print the plan, with the reason for each eval, and run nothing."
        ),
        env_option(
            "--unsafe-local", is_flag=True, help="Allow running agents outside CI (they run unconfined)."
        ),
        env_option("--keep-sandboxes", is_flag=True, help="Keep each trial's sandbox folder for inspection."),
        rescore_from_option(
            "Another run or results folder whose recorded trials may be re-checked instead of run "
            "when only assertions changed (repeatable; kept runs and --results-dir are always looked at)."
        ),
        env_option("--github-token", help="Token for pushing the history branch over HTTPS."),
    ]


def run_parameters(command: F) -> F:
    """Attach the options every running command shares (``eval`` and ``ci``)."""
    options = [*_trial_options(), *_history_options(), *_output_options()]
    for option in reversed(options):
        command = option(command)
    return paths_argument()(command)


@click.command("eval")
@run_parameters
@click.option(
    "--json", "as_json", is_flag=True, help="Print the run as JSON (docs/schemas/run.schema.json), no table."
)
def eval_command(as_json: bool, **params: Any) -> None:
    """Run eval files (or every eval under folders) through their agents and check the results.

    Exit codes: 0 every selected eval passed (cached ones included), 1 an eval failed or errored,
    2 bad input or a refused run, 3 the budget stopped the run before every selected trial ran (or, with
    --budget-strict, the forecast was above --budget-usd and nothing started), 130/143 SIGINT/SIGTERM
    cancelled it (what finished is written; a second signal stops at once).
    """
    options = run_options(params)
    with handle_signals() as cancel:
        if as_json:
            from ._json import emit_json

            # Only the document on stdout: notices (forecast, warnings) go to stderr.
            report = run(options, SilentSink(), notice=lambda note: click.echo(str(note), err=True))
            code = emit_json(report, options)
        else:
            progress = TerminalProgress(concurrency=options.concurrency)
            try:
                report = run(
                    options, progress, notice=lambda note: click.echo(str(note), err=note.level == "warning")
                )
            finally:
                progress.close()
            code = emit_report(report, options)
    raise SystemExit(cancel.exit_code or code)
