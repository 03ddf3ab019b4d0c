"""``trialbook report``: render a saved suite.json as Markdown or JUnit XML."""

from __future__ import annotations

from pathlib import Path

import click

from ..evidence import load_suite
from ..report.junit import render_junit
from ..report.markdown import render_summary
from ..report.suite_view import review_from_suite

__all__ = ["report_command"]


@click.command("report")
@click.argument("suite", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "junit"]), default="markdown", show_default=True
)
def report_command(suite: Path, fmt: str) -> None:
    """Render SUITE (a schema-4.0 suite.json) as a Markdown summary or JUnit XML."""
    report = load_suite(suite)
    if fmt == "junit":
        click.echo(render_junit(report), nl=False)
        return
    review = review_from_suite(report)
    click.echo(
        render_summary(review.rows, cached=review.cached, skipped=review.skipped, unstarted=review.unstarted)
    )
