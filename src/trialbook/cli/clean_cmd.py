"""``trialbook clean``: remove what killed runs left behind (sandboxes, temp files, cgroups)."""

from __future__ import annotations

from pathlib import Path

import click

from ..leftovers import sweep
from ._common import env_option

__all__ = ["clean_command"]


@click.command("clean")
@env_option(
    "--results-dir",
    type=click.Path(file_okay=False),
    default=".trialbook/results",
    show_default=True,
    help="Results folder whose interrupted writes to remove (its parent is looked at too).",
)
@env_option("--history-dir", type=click.Path(file_okay=False), help="History folder to look in as well.")
@click.option(
    "--folder",
    "folders",
    multiple=True,
    type=click.Path(file_okay=False),
    help="Another folder with temp files of interrupted writes (repeatable).",
)
def clean_command(results_dir: str, history_dir: str | None, folders: tuple[str, ...]) -> None:
    """Remove sandboxes and temp files left by trialbook runs whose process is gone (killed, crashed).

    Kills the trial processes such a run left running, then removes its trialbook-* sandboxes in the
    temp folder ($TMPDIR) and the hidden .*.tmp files of its interrupted writes in the results folder,
    its parent, the history folder and any --folder. What belongs to a trialbook process that is
    still running is never touched. Every run does the same sweep when it starts.
    """
    results = Path(results_dir).resolve()
    places = [results, results.parent, *(Path(folder) for folder in folders)]
    if history_dir:
        places.append(Path(history_dir))
    swept = sweep(file_folders=places)
    if swept.processes_killed:
        click.echo(f"killed {swept.processes_killed} process(es) left running by killed runs")
    for path in swept.removed:
        click.echo(f"removed {path}")
    for problem in swept.problems:
        click.echo(f"warning: {problem}", err=True)
    if not swept.removed and not swept.problems and not swept.processes_killed:
        click.echo("nothing to clean")
