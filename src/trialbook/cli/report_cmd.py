"""``trialbook report``: render a saved run as Markdown, JUnit XML or the self-contained HTML viewer."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import click

from .._util.fsutil import atomic_write_text
from ..evidence import load_suite
from ..report import ListedEval, ReviewRow
from ..report.html import render_html
from ..report.junit import render_junit
from ..report.markdown import render_summary
from ..report.suite_view import review_from_suite
from ..report.terminal import TableRow, fit, render_table, visible
from ..report.viewer_load import load_run, locate_run
from ._viewer import history_options, history_summaries

__all__ = ["report_command"]


@click.command("report")
@click.argument("run", required=False, type=click.Path(exists=True, path_type=Path), metavar="[RUN]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "junit"]),
    default=None,
    help="table: the terminal table and each failure on a line; markdown: the job summary (for "
    "$GITHUB_STEP_SUMMARY); junit: JUnit XML. [default: table on a terminal, markdown otherwise]",
)
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the self-contained HTML viewer to FILE instead of printing.",
)
@history_options
def report_command(
    run: Path | None,
    fmt: str | None,
    html_file: Path | None,
    history_dir: str | None,
    history_branch: str | None,
    last_n: int,
) -> None:
    """Render RUN (a suite.json, a run or results folder; default: the latest run) for reading.

    Markdown and JUnit XML print to stdout. --html writes one HTML file with inline CSS and script that
    fetches nothing and opens from file://; with history options it adds pass-rate and cost trends.
    """
    suite_path = locate_run(run, Path.cwd())
    if html_file is not None:
        data = load_run(suite_path)
        history = history_summaries(history_dir, history_branch, last_n)
        page = render_html(
            data, link_base=html_file.absolute().parent, history=history, history_window=last_n
        )
        atomic_write_text(html_file, page)
        click.echo(f"wrote {html_file} ({len(page.encode('utf-8')):,} bytes)")
        return
    report = load_suite(suite_path)
    if fmt == "junit":
        click.echo(render_junit(report), nl=False)
        return
    review = review_from_suite(report)
    if fmt == "table" or (fmt is None and sys.stdout.isatty()):
        click.echo(_table(review.rows, review.cached, review.skipped), nl=False)
        return
    click.echo(
        render_summary(
            review.rows,
            cached=review.cached,
            skipped=review.skipped,
            unstarted=review.unstarted,
            comparisons=review.comparisons,
        )
    )


def _table(rows: Sequence[ReviewRow], cached: Sequence[ListedEval], skipped: Sequence[ListedEval]) -> str:
    """The run as the terminal showed it: the table, then what failed, one line each within 160 columns."""
    table = [
        TableRow(row.eval_id, row.agent, row.passed, row.trials, row.verdict, row.cost_usd, row.duration_s,
                 note=row.note)
        for row in rows
    ]  # fmt: skip
    lines = [render_table(table).rstrip("\n")]
    failing = [row for row in rows if row.failures]
    if failing:
        lines += ["", "what failed:"]
        for row in failing:
            lines.append(fit(visible(f"  {row.eval_id} [{row.agent}]"), 160))
            lines += [fit(visible(f"    {line.splitlines()[0]}"), 160) for line in row.failures]
    for title, listed in (("cached (not re-run)", cached), ("skipped", skipped)):
        if listed:
            names = (f"{item.eval_id} [{item.agent}]" if item.agent else item.eval_id for item in listed)
            lines += ["", f"{title}: " + ", ".join(names)]
    return "\n".join(lines) + "\n"
