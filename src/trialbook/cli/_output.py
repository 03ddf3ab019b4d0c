"""Printing and writing what a run produced: plan, table, summary, JUnit; and the exit code."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path

import click

from .._util.fsutil import NotDurableError, atomic_write_text
from .._util.words import plural
from ..errors import ExitCode
from ..report.terminal import render_table, visible
from ..runner import (
    RunOptions,
    RunReport,
    comparisons,
    drift_headlines,
    entry_remarks,
    review_of,
    table_rows,
    trigger_groups,
    version_drift,
)

__all__ = ["emit_report", "render_plan", "write_report_files"]


def render_plan(report: RunReport) -> str:
    """One line per eval × agent: what will happen and why."""
    lines = []
    for entry in report.plan:
        action = "rescore" if entry.rescore is not None else entry.action
        lines.append(f"{action:<9} {entry.spec.id} [{entry.label}] — {entry.reason}")
    runnable = sum(1 for e in report.plan if e.action == "run" and e.rescore is None)
    rescored = sum(1 for e in report.plan if e.rescore is not None)
    trials = sum(e.spec.trials for e in report.plan if e.action == "run" and e.rescore is None)
    pairs = plural(runnable, "eval × agent pair")
    also = f", {rescored} rescored from recorded trials" if rescored else ""
    lines.append(
        f"{pairs} to run ({plural(trials, 'trial')}){also}, {len(report.plan) - runnable - rescored} not run"
    )
    if report.controls:
        count = plural(len(report.controls), "negative control trial")
        lines.append(
            f"{count} (the noop agent, which does nothing and costs nothing) to check for vacuous evals"
        )
    if report.forecast is not None and runnable:
        lines.append(report.forecast.describe())
    if report.over_budget:
        lines.append(f"warning: {report.over_budget}")
    return "\n".join(lines)


def emit_report(report: RunReport, options: RunOptions) -> int:
    """Print the outcome of a run, write the optional files, and return the exit code."""

    def mask(text: str) -> str:
        return visible(report.masker.text(text))

    for warning in report.warnings:
        if warning not in report.noticed:  # said once, when it came
            click.echo(f"warning: {warning}", err=True)
    if report.nothing_to_rerun is not None:
        click.echo(report.nothing_to_rerun)
        return ExitCode.OK
    if report.dry_run:
        return _emit_dry_run(report, mask)
    click.echo("")
    click.echo(mask(render_table(table_rows(report))))
    _emit_comparisons(report, mask)
    _emit_spending(report, options)
    _emit_closing(report, mask)
    return write_report_files(report, options)


def _emit_dry_run(report: RunReport, mask: Callable[[str], str]) -> int:
    """The plan, and what would make the real run refuse to start (exit 2 then)."""
    click.echo(mask(render_plan(report)))
    if not report.refusals:
        return ExitCode.OK
    click.echo("\nthe real run would refuse to start:", err=True)
    for problem in report.refusals:
        click.echo(mask("  " + problem.replace("\n", "\n  ")), err=True)
    return ExitCode.BAD_INPUT


def _emit_comparisons(report: RunReport, mask: Callable[[str], str]) -> None:
    """With and without arms, agent-version drift and trigger groups, each under its own heading."""
    compared = comparisons(report.plan, report.results)
    if compared:
        lines = [f"{pair.eval_id} [{pair.agent}]  {pair.comparison.text()}" for pair in compared]
        click.echo("\nwith and without:\n" + mask("\n".join(f"  {line}" for line in lines)))
    drifts = version_drift(report.plan, report.results)
    if drifts:
        lines = [f"{drift.eval_id} [{drift.agent}]  {drift.text()}" for drift in drifts]
        click.echo("\nagent versions:\n" + mask("\n".join(f"  {line}" for line in lines)))
        for headline in drift_headlines(drifts):
            click.echo(mask(f"  {headline}"))
    groups = trigger_groups(report.plan, report.results, report.base_lines)
    if groups:
        lines = [f"{group.eval_id} [{group.agent}] skill {group.skill}  {group.text()}" for group in groups]
        click.echo("\ntriggers:\n" + mask("\n".join(f"  {line}" for line in lines)))


def _emit_spending(report: RunReport, options: RunOptions) -> None:
    """Costs that are unknown or estimated, the budget's stop, and the trials adaptive trials saved."""
    ledger = report.ledger
    if ledger.unknown_cost_trials:
        click.echo(
            f"\ncost unknown for {plural(len(ledger.unknown_cost_trials), 'trial')}, not counted as free: "
            + _some(ledger.unknown_cost_trials)
        )
    if ledger.estimated_cost_trials:
        click.echo(
            f"\ncost estimated from token counts (the agent reports none) for "
            f"{plural(len(ledger.estimated_cost_trials), 'trial')}: {_some(ledger.estimated_cost_trials)}"
        )
    unstarted = sum(result.unstarted for result in report.results)
    if unstarted:
        click.echo(
            f"\nbudget of ${options.budget_usd} spent (${ledger.spent_usd:.4f}): "
            f"{plural(unstarted, 'trial')} not started"
        )
    saved = sum(result.saved for result in report.results)
    if saved:
        adaptive = [result for result in report.results if result.entry.spec.min_trials is not None]
        planned = sum(result.planned for result in adaptive)
        click.echo(
            f"\nadaptive trials: {saved} of {planned} planned trials not needed "
            f"({len(adaptive)} eval × agent pair(s) stopped once their verdict was decided)"
        )


def _emit_closing(report: RunReport, mask: Callable[[str], str]) -> None:
    """Notes per pair, a cancellation, kept sandboxes, history and durability problems, the results folder."""
    notes = [
        f"note: {result.entry.spec.id} [{result.entry.label}]: {note}"
        for result in report.results
        for note in entry_remarks(result)
    ]
    if notes:
        click.echo("\n" + mask("\n".join(notes)))
    if report.cancelled_by is not None:
        cancelled = sum(result.cancelled for result in report.results)
        name = signal.Signals(report.cancelled_by).name
        click.echo(f"\ncancelled by {name}: {cancelled} trial(s) not finished; their evals are incomplete")
    kept = [o.sandbox_path for r in report.results for o in r.outcomes if o.sandbox_path is not None]
    if kept:
        click.echo("\nkept sandboxes:\n" + "\n".join(f"  {path}" for path in kept))
    for problem in report.history_problems:
        click.echo(f"warning: history: {problem}", err=True)
    if report.history_error:
        click.echo(f"error: history was not shared: {report.history_error}", err=True)
    if report.durability_error:
        click.echo(f"error: {report.durability_error}", err=True)
    if report.suite is not None and report.suite_path is not None:
        click.echo(f"\nresults: {report.suite_path.parent}")


def write_report_files(report: RunReport, options: RunOptions) -> int:
    """Write the ``--junit`` and ``--summary`` files a finished run was asked for, masked.

    Returns the run's exit code, or 1 where it would be 0 and a file could not be written; each such
    file is reported on stderr (the run's own results are in its folder whatever happens here).
    """
    code = report.exit_code
    if report.suite is None:
        return code
    mask = report.masker.text
    failed = False
    if options.junit is not None:
        from ..report.junit import render_junit  # XML machinery only for runs asked for --junit

        # Masked value by value inside the renderer: masking the finished XML could touch its markup.
        failed |= not _write("--junit", options.junit, render_junit(report.suite, mask), report)
    if options.summary is not None:
        from ..report.markdown import render_summary

        review = review_of(report)
        text = render_summary(
            review.rows,
            cached=review.cached,
            skipped=review.skipped,
            unstarted=review.unstarted,
            comparisons=review.comparisons,
            triggers=review.triggers,
            versions=review.versions,
        )
        failed |= not _write("--summary", options.summary, mask(text), report)
    return ExitCode.FAILED if failed and code == ExitCode.OK else code


def _write(option: str, path: Path, text: str, report: RunReport) -> bool:
    try:
        atomic_write_text(path, text)
    except NotDurableError as exc:
        click.echo(f"error: {option} {path} was written, but may not be on disk: {exc.reason}", err=True)
        return False
    except OSError as exc:
        where = f"; the run's results are in {report.run_folder}" if report.run_folder is not None else ""
        click.echo(f"error: could not write {option} {path}: {exc.strerror or exc}{where}", err=True)
        return False
    return True


def _some(labels: list[str], limit: int = 10) -> str:
    return ", ".join(labels[:limit]) + (" …" if len(labels) > limit else "")
