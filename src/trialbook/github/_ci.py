"""What ``trialbook ci`` does: read the event, run what it asks for, and report back to GitHub.

The command line only collects the inputs; everything here is a library call so it can be tested with a
simulated Actions environment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ExitCode
from ..report._rows import BaseResult
from ..report.markdown import render_pr_comment, render_summary
from ..runner import ProgressSink, RunOptions, RunReport, load_specs, run
from ..runner._review import review_of
from ..select import parse_shard
from ._commands import emit_annotation, mask_secrets
from ._comment import upsert_sticky_comment
from ._env import ActionsEnv
from ._files import write_outputs, write_summary
from ._http import GitHubApi
from ._report import action_outputs, failure_annotations
from ._trigger import decide_trigger

__all__ = ["CiInputs", "CiOutcome", "run_ci"]

TITLE = "trialbook evals"


def _declared_secret_values(options: RunOptions) -> list[str]:
    specs = load_specs(options)
    names = {name for spec in specs for name in spec.secrets}
    return [options.environ[name] for name in sorted(names) if options.environ.get(name)]


def _base_lookup(report: RunReport) -> dict[tuple[str, str], BaseResult]:
    found: dict[tuple[str, str], BaseResult] = {}
    for entry in report.plan:
        line = report.base_lines.get(entry.key)
        if line is not None:
            found[(entry.spec.id, entry.label)] = BaseResult(
                passed=line.passed, trials=line.trials, verdict=line.verdict, commit=line.commit
            )
    return found


def _eval_files(report: RunReport, workspace: Path | None) -> dict[str, str]:
    root = (workspace or Path.cwd()).resolve()
    files: dict[str, str] = {}
    for entry in report.plan:
        try:
            files[entry.spec.id] = entry.spec.source.resolve().relative_to(root).as_posix()
        except ValueError:
            continue
    return files


@dataclass(frozen=True, kw_only=True)
class CiInputs:
    """The action's inputs; ``None`` means "let the event decide"."""

    paths: tuple[Path, ...] = (Path("evals"),)
    agents: tuple[str, ...] = ()
    budget_usd: float | None = None
    force: bool | None = None
    changed: bool | None = None
    base: str | None = None
    history_branch: str = "trialbook-results"
    concurrency: int = 4
    shard: str | None = None
    results_dir: Path = Path(".trialbook/results")
    comment: bool | None = None
    github_token: str | None = None


@dataclass
class CiOutcome:
    """What a ``ci`` run did, for the command line to print and exit with."""

    exit_code: int
    reason: str
    report: RunReport | None = None
    options: RunOptions | None = None
    comment_failure: str | None = None


def run_ci(environ: Mapping[str, str], inputs: CiInputs, sink: ProgressSink | None = None) -> CiOutcome:
    """Run evals as the event in ``environ`` asks and write summary, outputs, annotations and comment."""
    env = ActionsEnv.from_environ(environ)
    github_token = inputs.github_token
    base_options = RunOptions(paths=inputs.paths, environ=environ)
    # Masks first: nothing printed before them could be hidden afterwards.
    mask_secrets([value for value in (github_token, *_declared_secret_values(base_options)) if value])
    plan = decide_trigger(
        env,
        force=inputs.force,
        changed=inputs.changed,
        base=inputs.base,
        comment=inputs.comment,
    )
    print(f"trialbook ci: {plan.reason}", flush=True)
    if not plan.run:
        if env.summary_path is not None:
            write_summary(env.summary_path, f"## {TITLE}\n\nNothing ran: {plan.reason}\n")
        if env.output_path is not None:
            write_outputs(
                env.output_path,
                action_outputs(passed=0, failed=0, cached=0, cost_usd=0.0, summary=plan.reason),
            )
        return CiOutcome(exit_code=ExitCode.OK, reason=plan.reason)
    options = RunOptions(
        paths=inputs.paths,
        agents=tuple(name for value in inputs.agents for name in value.split()),
        budget_usd=inputs.budget_usd,
        force=plan.force,
        changed=plan.changed,
        base=plan.base or "origin/main",
        history_branch=inputs.history_branch,
        push=plan.push_history,
        github_token=github_token,
        concurrency=inputs.concurrency,
        shard=parse_shard(inputs.shard) if inputs.shard else None,
        results_dir=inputs.results_dir,
        repo=env.workspace or Path(),
        environ=environ,
    )
    report = run(options, sink, notice=lambda text: print(text, flush=True))
    outcome = CiOutcome(exit_code=report.exit_code, reason=plan.reason, report=report, options=options)
    bases = _base_lookup(report)
    review = review_of(report, base=lambda eval_id, label: bases.get((eval_id, label)))
    mask = report.masker.text
    listings = {"cached": review.cached, "skipped": review.skipped, "unstarted": review.unstarted}
    summary = mask(render_summary(review.rows, **listings, artifact_url=env.run_url, title=TITLE))
    if env.summary_path is not None:
        write_summary(env.summary_path, summary)
    costs = [row.cost_usd for row in review.rows]
    if env.output_path is not None:
        write_outputs(
            env.output_path,
            action_outputs(
                passed=sum(1 for row in review.rows if row.verdict == "pass"),
                failed=sum(1 for row in review.rows if row.verdict in ("fail", "error")),
                cached=len(review.cached),
                cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
                summary=summary,
            ),
        )
    for command in failure_annotations(review.rows, _eval_files(report, env.workspace)):
        print(mask(command), flush=True)
    if plan.comment and env.pr_number is not None:
        if not github_token:
            outcome.comment_failure = "no github-token was given"
        else:
            body = mask(
                render_pr_comment(
                    review.rows,
                    cached=review.cached,
                    skipped=review.skipped,
                    unstarted=review.unstarted,
                    artifact_url=env.run_url,
                    title=TITLE,
                    run_url=env.run_url,
                )
            )
            outcome.comment_failure = _post_comment(github_token, env, body)
        if outcome.comment_failure is not None:
            emit_annotation("warning", f"The PR comment was not posted: {outcome.comment_failure}")
    return outcome


def _post_comment(token: str, env: ActionsEnv, body: str) -> str | None:
    """Create or update the sticky comment; the reason it failed, or ``None`` when it was posted."""
    assert env.pr_number is not None
    outcome = upsert_sticky_comment(
        GitHubApi(token, api_url=env.api_url), env.repository, env.pr_number, body
    )
    return None if outcome.posted else outcome.reason
