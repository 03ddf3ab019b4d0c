"""What ``trialbook ci`` does: read the event, run what it asks for, and report back to GitHub.

It comes in stages, so the process that runs agents never holds the GitHub token (an agent can read the
environment of every process of its user, ``/proc/<pid>/environ``):

- ``fetch`` (token): bring the shared history branch into the local repository;
- ``run`` (no token): decide from the event, run, and leave ``ci.json`` in the results folder;
- ``publish`` (token, no agent): record the history lines, write the job summary, outputs and
  annotations, and post the PR comment, from one or more results folders (shards publish as one).

``all`` does the three in one process, for workflows that accept the token beside the agents. The
command line only collects the inputs; everything here is a library call, testable with a simulated
Actions environment.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import ExitCode, TrialbookError
from ..evalfiles import EvalSpec
from ..history import HistoryError, open_store
from ..masking import Masker
from ..report import BaseResult
from ..report.markdown import render_pr_comment, render_summary, sticky_marker
from ..report.suite_view import Review
from ..runner import (
    ProgressSink,
    RunOptions,
    RunReport,
    claim,
    current_cancellation,
    load_specs,
    pending_lines,
    review_of,
    run,
    run_masker,
)
from ..select import parse_shard
from ._commands import emit_annotation, mask_secrets
from ._comment import upsert_sticky_comment
from ._env import ActionsEnv
from ._files import write_outputs, write_summary
from ._http import GitHubApi
from ._report import action_outputs, cancellation_message, failure_annotations
from ._state import STATE_FILE, CiState, latest_attempts, merge_states, read_state, write_state
from ._stopped import TITLE, hand_over_error
from ._trigger import DEFAULT_LABEL, TriggerPlan, decide_trigger
from ._untrusted import TamperedArtifact, check_artifact
from ._workflow_run import comment_target

__all__ = [
    "CiInputs",
    "CiOutcome",
    "fetch_history",
    "publish",
    "run_ci",
    "run_stage",
]


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
    strict_agents: bool = False
    isolation: str | None = None
    comment_header: str | None = None
    """Names the sticky comment (its marker and heading), so two workflows keep separate comments."""
    label: str = DEFAULT_LABEL
    """The pull request label that asks for a run (and, on ``workflow_run``, for the comment)."""
    rescore_from: tuple[Path, ...] = ()
    """Earlier results folders (downloaded artifacts) whose trials may be re-checked instead of run."""


@dataclass
class CiOutcome:
    """What a ``ci`` stage did, for the command line to print and exit with."""

    exit_code: int
    reason: str
    report: RunReport | None = None
    options: RunOptions | None = None
    comment_failure: str | None = None
    history_warning: str | None = None


def _repo(env: ActionsEnv) -> Path:
    return env.workspace or Path()


def _trigger_plan(env: ActionsEnv, inputs: CiInputs) -> TriggerPlan:
    """What this event asks of the run, from the action's inputs (one reading for every stage)."""
    return decide_trigger(
        env,
        label=inputs.label,
        force=inputs.force,
        changed=inputs.changed,
        base=inputs.base,
        comment=inputs.comment,
    )


def fetch_history(environ: Mapping[str, str], inputs: CiInputs, *, announce_masks: bool = True) -> CiOutcome:
    """Bring the history branch from ``origin`` into the local repository, pushing nothing.

    A failure is a warning: the run then decides its cache from whatever history is local.
    """
    env = ActionsEnv.from_environ(environ)
    if announce_masks:
        mask_secrets([inputs.github_token] if inputs.github_token else [])
    store = open_store(
        history_dir=None,
        history_branch=inputs.history_branch,
        repo_path=_repo(env),
        push=False,
        token=inputs.github_token,
    )
    assert store is not None
    try:
        report = store.sync()
    except HistoryError as exc:
        message = f"history branch {inputs.history_branch!r} was not fetched: {exc}"
        emit_annotation("warning", message)
        return CiOutcome(exit_code=ExitCode.OK, reason=message, history_warning=message)
    finally:
        store.close()
    reason = f"history branch {inputs.history_branch!r}: {report.action}"
    print(f"trialbook ci: {reason}", flush=True)
    return CiOutcome(exit_code=ExitCode.OK, reason=reason)


def _exit_code(code: int) -> int:
    """``code``, or ``128 + signal`` when a signal arrived: the process exits with that, so ci.json must too.

    The report knows of a signal that reached the trials; one arriving after them (while the suite,
    the manifest or ci.json itself is written) is known only to the handler.
    """
    cancel = current_cancellation()
    return cancel.exit_code if cancel is not None and cancel.exit_code is not None else code


def _state_of(report: RunReport, options: RunOptions, plan: TriggerPlan, env: ActionsEnv) -> CiState:
    bases = _base_lookup(report)
    review = review_of(report, base=lambda eval_id, label: bases.get((eval_id, label)))
    return CiState(
        reason=plan.reason,
        ran=True,
        comment=plan.comment,
        push=plan.push_history,
        exit_code=_exit_code(report.exit_code),
        review=review,
        eval_files=_eval_files(report, env.workspace),
        history_lines=report.history_lines
        if report.history_lines is not None
        else pending_lines(report.results, report.masker, options),
        history_problems=list(report.history_problems),
        shard=f"{options.shard[0]}/{options.shard[1]}" if options.shard else None,
        run_attempt=env.run_attempt,
    )


def run_stage(
    environ: Mapping[str, str],
    inputs: CiInputs,
    sink: ProgressSink | None = None,
    *,
    announce_masks: bool = True,
    plan: TriggerPlan | None = None,
    specs: Sequence[EvalSpec] | None = None,
) -> tuple[CiOutcome, CiState]:
    """Decide from the event and run, with no GitHub token; ``ci.json`` in the results folder says what.

    History is read from the local branch only (see :func:`fetch_history`) and recorded by the
    publisher. A run that stops before any result (bad input, a refused event) still leaves its
    ``ci.json`` inside Actions, with the error, so the publish step can show it, and then raises as
    before. ``plan`` and ``specs`` are the trigger plan and the loaded evals of a caller that needed
    them first (:func:`run_ci`), so the event is read and the eval files are loaded once.
    """
    masker = Masker()
    try:
        env = ActionsEnv.from_environ(environ)
        plan = plan if plan is not None else _trigger_plan(env, inputs)
        base_options = RunOptions(paths=inputs.paths, environ=environ)
        if specs is None:
            specs = load_specs(base_options)
        masker = run_masker(specs, environ)
        # Masks first: nothing printed before them could be hidden afterwards.
        if announce_masks:
            mask_secrets(list(masker.values))
        print(f"trialbook ci: {plan.reason}", flush=True)
        if not plan.run:
            state = CiState(
                reason=plan.reason, ran=False, comment=False, push=False, exit_code=_exit_code(ExitCode.OK)
            )
            claim(inputs.results_dir, "ci")
            write_state(inputs.results_dir, state)
            return CiOutcome(exit_code=ExitCode.OK, reason=plan.reason), state
        options = RunOptions(
            paths=inputs.paths,
            agents=tuple(name for value in inputs.agents for name in value.split()),
            budget_usd=inputs.budget_usd,
            force=plan.force,
            changed=plan.changed,
            base=plan.base or "origin/main",
            history_branch=inputs.history_branch,
            push=False,
            record_history=False,
            concurrency=inputs.concurrency,
            shard=parse_shard(inputs.shard) if inputs.shard else None,
            results_dir=inputs.results_dir,
            rescore_from=inputs.rescore_from,
            repo=_repo(env),
            environ=environ,
            strict_agents=inputs.strict_agents,
            isolation=inputs.isolation,
        )
        report = run(options, sink, notice=lambda note: print(note, flush=True), specs=specs)
    except TrialbookError as exc:
        if plan is not None or environ.get("GITHUB_ACTIONS") == "true":
            error = CiState(
                reason=plan.reason if plan is not None else "the event was not read",
                ran=plan.run if plan is not None else False,
                comment=plan.comment if plan is not None else False,
                push=False,
                exit_code=exc.exit_code,
                error=masker.text(str(exc)),
            )
            hand_over_error(inputs.results_dir, error)
        raise
    state = _state_of(report, options, plan, env)
    write_state(inputs.results_dir, state)
    return CiOutcome(exit_code=state.exit_code, reason=plan.reason, report=report, options=options), state


def _record_history(state: CiState, inputs: CiInputs, env: ActionsEnv) -> str | None:
    """Append and push the lines; the reason it did not land (a warning, never a failure), or ``None``."""
    if not state.history_lines:
        return None
    try:
        store = open_store(
            history_dir=None,
            history_branch=inputs.history_branch,
            repo_path=_repo(env),
            push=state.push,
            token=inputs.github_token,
        )
    except TrialbookError as exc:
        return str(exc)
    assert store is not None
    try:
        store.append(state.history_lines)
        if state.push:
            store.sync()
    except HistoryError as exc:
        return (
            f"{exc} The history lines are kept in the results artifact (ci.json); "
            "`trialbook ci --stage publish` on it records them later."
        )
    finally:
        store.close()
    return None


def publish(
    environ: Mapping[str, str],
    inputs: CiInputs,
    folders: tuple[Path, ...] = (),
    state: CiState | None = None,
    *,
    announce_masks: bool = True,
) -> CiOutcome:
    """Record history and report to GitHub from the run step's ``ci.json`` (several folders merge).

    Exits with the run's own exit code: publishing problems (a push that cannot land, a comment that
    cannot be posted) are warnings, never failures of a run whose evals passed. The steps: read and
    check the state, say why nothing ran (or record history), write the summary and outputs, annotate
    failures, post the comment.
    """
    env = ActionsEnv.from_environ(environ)
    token = inputs.github_token
    if announce_masks:
        mask_secrets([token] if token else [])
    state = _trusted_state(state, inputs, env, folders)
    mask = Masker([token] if token else []).text
    outcome = CiOutcome(exit_code=state.exit_code, reason=state.reason)
    cancelled = cancellation_message(state.exit_code)
    if cancelled is not None:
        emit_annotation("error", cancelled)
    if not state.ran or state.error is not None:
        _report_nothing_ran(state, env, mask, cancelled)
        return outcome
    outcome.history_warning = _record_history(state, inputs, env)
    if outcome.history_warning is not None:
        _missing_token(environ, outcome, token, "push history")
    title = f"{TITLE}: {inputs.comment_header}" if inputs.comment_header else TITLE
    _report_run(state, env, mask, title, cancelled, outcome.history_warning)
    for command in failure_annotations(state.review.rows, state.eval_files):
        print(mask(command), flush=True)
    if state.comment:
        _comment(state, inputs, environ, outcome, mask, title)
    return outcome


def _trusted_state(
    state: CiState | None, inputs: CiInputs, env: ActionsEnv, folders: tuple[Path, ...]
) -> CiState:
    """The state to publish: read from the results folders as untrusted data unless given.

    A ``workflow_run``'s artifact is another run's, which a fork's code may have written: its history
    lines are dropped and nothing is pushed.
    """
    if state is None:
        states, replaced = latest_attempts([_read_untrusted(f) for f in folders or (inputs.results_dir,)])
        for note in replaced:
            print(f"trialbook publish: {note}; only the newest attempt is reported.", flush=True)
        state = merge_states(states)
        if len(folders) > 1:
            _warn_unrun_shards(state)
        # Read from results folders: data the job that ran the agents wrote, checked before any use.
        _check_folders(state, inputs, env, folders)
    if env.event_name != "workflow_run":
        return state
    if state.history_lines:
        print(
            "trialbook publish: the history lines of a workflow_run's artifact are not recorded "
            "(a pull request's run could have forged them).",
            flush=True,
        )
    return replace(state, push=False, history_lines=())


def _report_nothing_ran(
    state: CiState, env: ActionsEnv, mask: Callable[[str], str], cancelled: str | None
) -> None:
    """The job summary and outputs of a run that ran no trial or stopped on an error."""
    text = f"Nothing ran: {state.reason}" if state.error is None else f"The run stopped: {state.error}"
    if cancelled is not None:
        text = f"{cancelled}\n\n{text}"
    if state.error is not None:
        emit_annotation("error", mask(state.error))
    markdown = mask(f"## {TITLE}\n\n{text}\n")  # the `summary` output is the job summary, as documented
    if env.summary_path is not None:
        write_summary(env.summary_path, markdown)
    if env.output_path is not None:
        write_outputs(
            env.output_path, action_outputs(passed=0, failed=0, cached=0, cost_usd=0.0, summary=markdown)
        )


def _report_run(
    state: CiState,
    env: ActionsEnv,
    mask: Callable[[str], str],
    title: str,
    cancelled: str | None,
    history_warning: str | None,
) -> None:
    """The job summary and the step's outputs of a run that ran."""
    review = state.review
    summary = render_summary(review.rows, **_listings(review), artifact_url=env.run_url, title=title)
    if cancelled is not None:
        # Right under the heading: the counts below are of a run that did not finish.
        summary = summary.replace("\n\n", f"\n\n> [!CAUTION]\n> {cancelled}\n\n", 1)
    if history_warning is not None:
        emit_annotation("warning", mask(f"History was not recorded: {history_warning}"))
        summary += f"\n> [!WARNING]\n> History was not recorded: {history_warning}\n"
    summary = mask(summary)
    if env.summary_path is not None:
        write_summary(env.summary_path, summary)
    if env.output_path is None:
        return
    costs = [row.cost_usd for row in review.rows]
    outputs = action_outputs(
        passed=sum(1 for row in review.rows if row.verdict == "pass"),
        failed=sum(1 for row in review.rows if row.verdict in ("fail", "error", "vacuous")),
        cached=len(review.cached),
        cost_usd=None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
        summary=summary,
    )
    write_outputs(env.output_path, outputs)


def _listings(review: Review) -> dict[str, Any]:
    """What the summary and the comment both list beside the rows: cached, skipped, unstarted, compared."""
    return {
        "cached": review.cached,
        "skipped": review.skipped,
        "unstarted": review.unstarted,
        "comparisons": review.comparisons,
        "triggers": review.triggers,
        "versions": review.versions,
    }


def _comment(
    state: CiState,
    inputs: CiInputs,
    environ: Mapping[str, str],
    outcome: CiOutcome,
    mask: Callable[[str], str],
    title: str,
) -> None:
    """Post or update the sticky PR comment; a failure is a warning on ``outcome``."""
    env = ActionsEnv.from_environ(environ)
    token = inputs.github_token
    target = comment_target(env, token, inputs.label)
    if target.number is None:
        print(mask(f"trialbook publish: no PR comment: {target.reason}."), flush=True)
    elif not token:
        outcome.comment_failure = "no github-token was given"
        _missing_token(environ, outcome, token, "post the PR comment")
    else:
        review = state.review
        marker = sticky_marker(inputs.comment_header)
        body = render_pr_comment(
            review.rows,
            **_listings(review),
            artifact_url=env.run_url,
            title=title,
            run_url=env.run_url,
            marker=marker,
            head_sha=target.head,
            updated_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        )
        outcome.comment_failure = _post_comment(token, env, target.number, mask(body), marker, target.head)
    if outcome.comment_failure is not None:
        emit_annotation("warning", f"The PR comment was not posted: {outcome.comment_failure}")


def _missing_token(environ: Mapping[str, str], outcome: CiOutcome, token: str | None, what: str) -> None:
    """In GitHub Actions, a publishing step that could not ``what`` and had no token fails (exit code 2).

    Not a passing run's passing publishing problem but a setting: every run would lose its history or
    comment the same way, so the job turns red with the fix instead of green with a warning. (A push can
    still land without the input, through credentials the checkout kept; then nothing is missing.)
    """
    if token or environ.get("GITHUB_ACTIONS") != "true":
        return
    emit_annotation(
        "error",
        f"github-token: the input is empty, so trialbook could not {what}. Leave it at its default (the "
        "workflow's token) or pass a token, and give the publishing job `permissions: contents: write` "
        "(history) and `pull-requests: write` (the comment).",
    )
    outcome.exit_code = ExitCode.BAD_INPUT


def _read_untrusted(folder: Path) -> CiState:
    """``folder``'s ci.json, read as an artifact another job wrote.

    One that is there but is no run's hand-over (a link, too large, not what trialbook writes) is a
    refused artifact, exit code 1; a folder without one is a usage mistake, exit code 2.
    """
    path = folder / STATE_FILE
    if not path.exists() and not path.is_symlink():
        return read_state(folder)
    try:
        return read_state(folder)
    except TrialbookError as exc:
        raise TamperedArtifact(f"{exc}; refused, nothing of it is published") from None


def _check_folders(state: CiState, inputs: CiInputs, env: ActionsEnv, folders: tuple[Path, ...]) -> None:
    source = ", ".join(str(f / "ci.json") for f in folders or (inputs.results_dir,))
    if env.event_name == "workflow_run":
        # Its lines are dropped below; its text is still checked before anything of it is printed.
        check_artifact(replace(state, history_lines=()), (), event="", ref="", source=source)
        return
    planned = _planned_pairs(inputs) if state.history_lines else set()
    check_artifact(state, planned, event=env.event_name, ref=env.ref or "", source=source)


def _planned_pairs(inputs: CiInputs) -> set[tuple[str, str]]:
    """Every eval × agent label the eval files of this checkout define: what a run may record lines for.

    Read by the publish step from its own checkout, never from the artifact: the labels a run gives its
    pairs (``name-2`` for a second entry of one agent, the ``~without`` arm, the negative control) and
    the agents the action's ``agents`` input may add to an eval.
    """
    from ..runner import CONTROL_LABEL, WITHOUT_SUFFIX, agent_label

    try:
        specs = load_specs(RunOptions(paths=inputs.paths))
    except TrialbookError as exc:
        raise TrialbookError(
            f"the eval files at {' '.join(map(str, inputs.paths))} could not be read ({exc}), so the "
            "artifact's history lines cannot be checked: check out the repository in the publish job and "
            "give the action the same `evals` input as the run job"
        ) from None
    pairs: set[tuple[str, str]] = set()
    for spec in specs:
        labels = {agent_label(spec, index) for index in range(len(spec.agents))} | set(inputs.agents)
        if spec.compare is not None:
            labels |= {label + WITHOUT_SUFFIX for label in labels}
        labels.add(CONTROL_LABEL)
        pairs |= {(spec.id, label) for label in labels}
    return pairs


def _warn_unrun_shards(state: CiState) -> None:
    """Warn about pairs every shard left to another one that none of the given folders ran.

    Either a shard's folder is missing, or the shards split from different history (a push landed
    between their fetches); the summary lists them as skipped, the warning makes sure it is seen.
    """
    left = [item for item in state.review.skipped if item.reason == "another shard"]
    if left:
        names = ", ".join(f"{item.eval_id} [{item.agent}]" for item in left[:5])
        more = f" and {len(left) - 5} more" if len(left) > 5 else ""
        emit_annotation(
            "warning",
            f"{len(left)} eval × agent pair(s) were left to another shard that none of the published "
            f"folders ran ({names}{more}): a shard's results are missing, or the shards read different "
            "history. Re-run the workflow to run them.",
        )


def run_ci(environ: Mapping[str, str], inputs: CiInputs, sink: ProgressSink | None = None) -> CiOutcome:
    """All stages in one process: fetch history, run, publish (the token shares the agents' process).

    The event is read and the eval files are loaded once, here, for the masks and the fetch, and handed
    to the run; only when that fails does the run try again, to stop with its error in ``ci.json``.
    """
    env = ActionsEnv.from_environ(environ)
    specs: list[EvalSpec] | None
    try:
        specs = load_specs(RunOptions(paths=inputs.paths, environ=environ))
    except TrialbookError:
        specs = None  # the run stage stops with this error, and hands it over
    # Masks first, once: nothing printed before them could be hidden afterwards.
    secrets = list(run_masker(specs, environ).values) if specs is not None else []
    mask_secrets([*([inputs.github_token] if inputs.github_token else []), *secrets])
    try:
        plan: TriggerPlan | None = _trigger_plan(env, inputs)
    except TrialbookError:
        plan = None  # likewise: a refused event stops the run stage
    if plan is not None and plan.run:
        fetch_history(environ, inputs, announce_masks=False)
    try:
        ran, state = run_stage(environ, inputs, sink, announce_masks=False, plan=plan, specs=specs)
    except TrialbookError:
        # The error is in ci.json when the results folder is trialbook's: show it in the job summary.
        with contextlib.suppress(TrialbookError, OSError):
            publish(environ, inputs, folders=(inputs.results_dir,), announce_masks=False)
        raise
    published = publish(environ, inputs, state=state, announce_masks=False)
    ran.comment_failure = published.comment_failure
    ran.history_warning = published.history_warning
    return ran


def _post_comment(
    token: str, env: ActionsEnv, number: int, body: str, marker: str, head: str | None
) -> str | None:
    """Create or update the sticky comment; the reason it failed, or ``None`` when it was posted."""
    outcome = upsert_sticky_comment(
        GitHubApi(token, api_url=env.api_url),
        env.repository,
        number,
        body,
        marker=marker,
        head_sha=head,
    )
    return None if outcome.posted else outcome.reason
