"""``trialbook clean``: remove what killed runs left behind (sandboxes, temp files, cgroups)."""

from __future__ import annotations

from pathlib import Path

import click

from ..runner import sweep_partials, unusable_path
from ..sandbox.leftovers import sweep
from ._common import env_option

__all__ = ["clean_command"]


@click.command("clean")
@env_option(
    "--results-dir",
    type=click.Path(file_okay=False),
    help="A results folder whose interrupted writes to remove (its parent is looked at too).",
)
@env_option(
    "--runs-dir",
    type=click.Path(file_okay=False),
    default=".trialbook/runs",
    show_default=True,
    help="The kept-runs folder to look in (and its parent).",
)
@env_option("--history-dir", type=click.Path(file_okay=False), help="History folder to look in as well.")
@click.option(
    "--folder",
    "folders",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Another folder with temp files of interrupted writes (repeatable).",
)
def clean_command(
    results_dir: str | None, runs_dir: str, history_dir: str | None, folders: tuple[str, ...]
) -> None:
    """Remove sandboxes and temp files left by trialbook runs whose process is gone (killed, crashed).

    Kills the trial processes such a run left running, then removes its trialbook-* sandboxes in the
    temp folder ($TMPDIR) and the hidden .*.tmp files of its interrupted writes in the runs folder,
    the results folder, their parents, the history folder and any --folder. A run killed while its
    results were swapped in is finished: the complete run is put in place and your files in the
    previous results folder are moved back. What belongs to a trialbook process that is still running
    is never touched. Every run does the same sweep when it starts.
    """
    named = [("--runs-dir", runs_dir), ("--results-dir", results_dir), ("--history-dir", history_dir)]
    named += [("--folder", folder) for folder in folders]
    for label, value in named:
        problem = unusable_path(Path(value), label) if value else None
        if problem is not None:
            raise click.UsageError(problem)
    places = [Path(folder) for folder in folders]
    for owned in (Path(runs_dir), *([Path(results_dir)] if results_dir else [])):
        places += [owned.resolve(), owned.resolve().parent]
    if history_dir:
        places.append(Path(history_dir))
    swept = sweep(file_folders=places)
    if swept.processes_killed:
        click.echo(f"killed {swept.processes_killed} process(es) left running by killed runs")
    for path in swept.removed:
        click.echo(f"removed {path}")
    # What a killed run left beside its results: finished (a complete run put in place) or removed.
    finished = sweep_partials(Path(runs_dir).resolve())
    if results_dir:
        final = Path(results_dir).resolve()
        finished += sweep_partials(final.parent, final)
    for line in finished:
        click.echo(line, err=line.startswith("left "))
    for problem in swept.problems:
        click.echo(f"warning: {problem}", err=True)
    if not (swept.removed or swept.problems or swept.processes_killed or finished):
        click.echo("nothing to clean")
