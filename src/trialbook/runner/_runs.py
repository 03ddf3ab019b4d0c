"""Kept runs: one folder per run under ``.trialbook/runs/``, a ``latest`` link, and a retention limit.

Keeping earlier runs is what makes "what changed since the last run?" and ``--last-failed`` possible; the
limit keeps the folder from growing without end. Only folders trialbook made (named like a run id and
carrying its marker) are ever removed.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from .._util.fsutil import NotDurableError, atomic_symlink, atomic_write_text
from ..errors import UsageError
from ..evalfiles import EvalSpec
from ..evidence import LATEST, RUN_ID_PATTERN, latest_run
from ._folder import MARKER, StagedFolder, claim, folder_lock, pid_alive, remove_folder, stage
from ._manifest import failed_pairs, read_manifest
from ._options import RunOptions
from ._plan import agent_label
from ._selection import Selection, check_selection

__all__ = [
    "begin_run",
    "finish_run",
    "new_run_id",
    "previous_run",
    "prune_runs",
    "run_folders",
    "selection_for",
    "set_latest",
]

_RUN_ID = re.compile(rf"^{RUN_ID_PATTERN}$")


def new_run_id(started: float) -> str:
    """``<UTC time>-<6 hex>``: sorts by start time, unique enough for runs started the same second."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(started)) + "-" + secrets.token_hex(3)


def _finished_at(run: Path) -> tuple[int, str]:
    # The marker is rewritten when the run is swapped in, so its time orders runs by completion, also
    # within the one second the run id's time resolves.
    try:
        return (run.joinpath(MARKER).stat().st_mtime_ns, run.name)
    except OSError:
        return (0, run.name)


def run_folders(root: Path) -> list[Path]:
    """The complete kept runs under ``root``, oldest first (by when they completed)."""
    if not root.is_dir():
        return []
    found = [
        entry
        for entry in root.iterdir()
        if _RUN_ID.match(entry.name) and not entry.is_symlink() and (entry / MARKER).is_file()
    ]
    return sorted(found, key=_finished_at)


def set_latest(root: Path, run: Path) -> None:
    """Point ``root/latest`` at ``run``, atomically (a relative symlink; a text file where links fail)."""
    link = root / LATEST
    if not atomic_symlink(link, run.name):
        atomic_write_text(link, run.name + "\n")  # platforms without symlinks for this user


def _finishing(run: Path) -> bool:
    """Whether another live process wrote ``run`` (it may not have named it ``latest`` yet)."""
    try:
        pid = json.loads((run / MARKER).read_text(encoding="utf-8")).get("pid")
    except (OSError, ValueError, AttributeError):
        return False
    return pid != os.getpid() and pid_alive(pid)


def prune_runs(root: Path, keep: int, current: Path) -> list[Path]:
    """Remove the oldest kept runs beyond ``keep``; return what was removed.

    Never ``current``, the run ``latest`` names, nor a run whose process is still alive: two runs
    finishing at once each see the other's run, and neither may remove it. Each goes by way of a
    ``.gone`` name, so a kill part way leaves nothing a later run does not remove.
    """
    if keep < 1:
        raise UsageError(f"--keep-runs must be at least 1, got {keep}")
    named = latest_run(root)
    runs = [run for run in run_folders(root) if run != current]
    removed = [run for run in runs[: max(0, len(runs) - (keep - 1))] if run != named and not _finishing(run)]
    for run in removed:
        remove_folder(run, run, run.name)
    return removed


def latest_problem(root: Path) -> str | None:
    """Why ``root/latest`` cannot be pointed at a run (something of the user's is there), or ``None``."""
    link = root / LATEST
    if link.is_symlink() or not link.exists() or link.is_file():
        return None
    return f"{link} is a folder; trialbook keeps a link there naming the latest run: move it away"


def begin_run(options: RunOptions, run_id: str) -> StagedFolder:
    """Stage this run's folder: ``--results-dir`` (replaced at the end), or ``<runs>/<run id>``.

    Raises:
        UsageError: the folder cannot be made (a read-only disk, a file in the way): nothing has run.
    """
    try:
        if options.results_dir is not None:
            return stage(options.results_dir.resolve(), run_id)
        root = options.runs_dir.resolve()  # its ``latest`` was checked with the run's other paths
        claim(root, "runs")
        return stage(root / run_id, run_id)
    except OSError as exc:
        where = options.results_dir or options.runs_dir
        raise UsageError(
            f"cannot write the run's folder at {where}: {exc.strerror or exc}"
            + (f" ({exc.filename})" if exc.filename else "")
            + "; choose a folder on a disk trialbook can write to. No trial was started."
        ) from exc


def finish_run(options: RunOptions, staged: StagedFolder) -> tuple[Path, str | None]:
    """Swap the finished run in; for kept runs also move ``latest`` to it and apply the retention limit.

    Returns the run's folder and, when the disk reported a write error while flushing it, why it may
    not survive a crash (see :meth:`StagedFolder.commit`).
    """
    final, problem = staged.commit()
    if options.results_dir is None:
        root = final.parent
        # One run at a time names itself latest and prunes: another's prune then sees the new latest.
        with folder_lock(root):
            try:
                set_latest(root, final)
            except NotDurableError as exc:  # ``latest`` names the run; its folder's fsync failed
                problem = problem or exc.reason
            prune_runs(root, options.keep_runs, final)
    return final, problem


def previous_run(options: RunOptions) -> Path | None:
    """The latest complete run: ``--results-dir`` when given, else what ``<runs>/latest`` names."""
    if options.results_dir is not None:
        return options.results_dir if options.results_dir.is_dir() else None
    return latest_run(options.runs_dir)


def selection_for(options: RunOptions, specs: Sequence[EvalSpec], registered: Collection[str]) -> Selection:
    """The run's selection, checked; ``--last-failed`` reads the failed pairs of the latest run."""
    labels = {spec.id: [agent_label(spec, i) for i in range(len(spec.agents))] for spec in specs}
    selection = Selection(filters=options.filters, agents=options.agents)
    check_selection(specs, selection, registered=registered, labels=labels)
    if not options.last_failed:
        return selection
    folder = previous_run(options)
    if folder is None:
        where = options.results_dir or options.runs_dir / "latest"
        raise UsageError(f"--last-failed: there is no earlier run at {where} to take the failures from")
    manifest = read_manifest(folder)
    return Selection(
        filters=options.filters,
        agents=options.agents,
        only_keys=frozenset(failed_pairs(manifest)),
        only_reason=f"did not fail in the latest run ({manifest.get('run_id')})",
    )
