"""``trialbook rescore``: check a kept run's recorded trials again with the current assertions."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import ExitCode, UsageError
from ..evidence import latest_run
from ..runner import MANIFEST, NOT_RESCORABLE, RunOptions, handle_signals, read_manifest
from ..runner import run as run_evals
from ._common import DEFAULT_HISTORY_DIR, env_option, history_place
from ._output import emit_report
from ._progress import TerminalProgress

__all__ = ["rescore_command"]

_RUNS = Path(".trialbook/runs")
_RESULTS = Path(".trialbook/results")


def find_run(name: str | None) -> Path:
    """The run folder ``name`` names: a folder, a run id under ``.trialbook/runs``; default the latest."""
    if name is None:
        for folder in (latest_run(_RUNS), _RESULTS):
            if folder is not None and (folder / MANIFEST).is_file():
                return folder
        raise UsageError(
            f"no kept run to rescore: neither {_RUNS / 'latest'} nor {_RESULTS} holds a {MANIFEST}; "
            "run `trialbook eval` first, or give RUN (a run folder or a run id)"
        )
    for folder in (Path(name), _RUNS / name):
        if (folder / MANIFEST).is_file():
            return folder
    raise UsageError(
        f"RUN {name}: no run folder there (nor at {_RUNS / name}) holding a {MANIFEST}; give a folder "
        f"`trialbook eval` wrote, or a run id listed under {_RUNS}"
    )


def _eval_files(folder: Path, given: tuple[str, ...]) -> tuple[Path, ...]:
    """The eval files to read the current assertions from: ``--evals``, else those the run names."""
    if given:
        return tuple(Path(path) for path in given)
    pairs = read_manifest(folder).get("pairs")
    named = {str(pair.get("eval_file")) for pair in pairs or () if isinstance(pair, dict)}
    found = tuple(sorted(Path(name) for name in named if Path(name).exists()))
    if not found:
        shown = ", ".join(sorted(named)) or "none"
        raise UsageError(
            f"{folder / MANIFEST}: field pairs[].eval_file names no eval file that exists here ({shown}); "
            "run from the folder the run was made in, or give the eval files with --evals"
        )
    return found


@click.command("rescore")
@click.argument("run", required=False, metavar="[RUN]")
@click.option(
    "--evals",
    "eval_paths",
    multiple=True,
    metavar="PATH",
    help="Eval files or folders with the current assertions (default: the eval files the run names).",
)
@env_option(
    "--results-dir",
    type=click.Path(file_okay=False),
    help="Write the new run's folder here instead of a new kept run under .trialbook/runs/.",
)
@env_option("--keep-runs", type=click.IntRange(min=1), default=20, show_default=True, metavar="N")
@env_option(
    "--history-dir",
    type=click.Path(file_okay=False),
    help=f"Keep history as DIR/<id>.jsonl files [default: {DEFAULT_HISTORY_DIR} outside CI, unless "
    "--history-branch is given].",
)
@env_option("--history-branch", metavar="NAME", help="Keep history on this orphan git branch.")
def rescore_command(
    run: str | None,
    eval_paths: tuple[str, ...],
    results_dir: str | None,
    keep_runs: int,
    history_dir: str | None,
    history_branch: str | None,
) -> None:
    """Check RUN's recorded trials again with the current assertions, starting no agent (default: latest).

    Each trial's final sandbox is rebuilt from the eval's template and the trial's changes.json, its
    call log and result are read back, and the current assertions run over them. The verdicts go into
    a new run folder marked rescored_from, with history lines that say so. A pair whose prompt, agent,
    template or trial settings changed since RUN, or whose trials cannot answer an assertion (a command
    to run, a file kept masked or past a limit), is not_rescorable, with why.

    Exit codes: 0 every re-checked pair passed, 1 one failed or a pair was not_rescorable, 2 bad input.
    """
    folder = find_run(run)
    history_dir, history_branch = history_place(history_dir, history_branch, recording=True)
    options = RunOptions(
        paths=_eval_files(folder, eval_paths),
        rescore_run=folder,
        results_dir=Path(results_dir) if results_dir else None,
        keep_runs=keep_runs,
        history_dir=Path(history_dir) if history_dir else None,
        history_branch=history_branch,
    )
    with handle_signals() as cancel:
        progress = TerminalProgress(concurrency=1)
        try:
            report = run_evals(
                options, progress, notice=lambda note: click.echo(str(note), err=note.level == "warning")
            )
        finally:
            progress.close()
        code = emit_report(report, options)
    refused = [entry for entry in report.plan if entry.reason.startswith(NOT_RESCORABLE)]
    for entry in refused:
        why = entry.reason.removeprefix(f"{NOT_RESCORABLE}: ")
        click.echo(report.masker.text(f"{NOT_RESCORABLE} {entry.spec.id} [{entry.label}]: {why}"))
    if refused and code == ExitCode.OK:
        code = ExitCode.FAILED
    raise SystemExit(cancel.exit_code or code)
