"""The results folder is trialbook's alone: a marker says so, and only what trialbook wrote is ever removed.

A run is written into a staging folder beside its final place and swapped in only once it is complete, so
the previous run's results stay readable (and whole) until the new ones exist. A folder that holds files
but no marker belongs to someone else: trialbook refuses it rather than write into it or clear it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from .._owner import pid_alive
from .._records import FrozenRecord, frozen_record
from ..errors import UsageError
from ..fsutil import NotDurableError, atomic_write_text, sync_directory, sync_folder, sync_later

__all__ = [
    "MARKER",
    "StagedFolder",
    "check_owned",
    "claim",
    "is_owned",
    "ownership_problem",
    "pid_alive",
    "stage",
    "sweep_partials",
]

MARKER = ".trialbook-results"
"""The file that says a folder is trialbook's. It lists what trialbook wrote there."""

_IGNORE = "# written by trialbook: results are artifacts, not sources\n*\n"
# What trialbook itself wrote into a results folder before it carried a marker.
_LEGACY = frozenset({"suite.json", "evals", ".gitignore"})


def _read_marker(folder: Path) -> dict[str, object] | None:
    try:
        data = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _legacy(folder: Path, names: set[str]) -> bool:
    """A results folder an earlier trialbook wrote: only its own names, and its own ``.gitignore``."""
    if not names <= _LEGACY or ".gitignore" not in names:
        return False
    try:
        return (folder / ".gitignore").read_text(encoding="utf-8").startswith("# written by trialbook")
    except (OSError, UnicodeDecodeError):
        return False


def is_owned(folder: Path) -> bool:
    """Whether trialbook may write into (and replace what it wrote in) ``folder``.

    True for a folder that does not exist, an empty one, one with the marker, or one an earlier trialbook
    wrote before markers existed.
    """
    if not folder.exists():
        return True
    if not folder.is_dir():
        return False
    names = {entry.name for entry in folder.iterdir()}
    return not names or MARKER in names or _legacy(folder, names)


def ownership_problem(folder: Path, what: str) -> str | None:
    """Why trialbook may not write into ``folder`` (naming it and the way out), or ``None``."""
    if is_owned(folder):
        return None
    kind = "is not a folder" if not folder.is_dir() else "is not empty"
    return (
        f"{what} {folder} {kind} and has no {MARKER} marker, so it is not trialbook's: trialbook writes "
        "only into a new or empty folder, or one it made itself. Choose another folder."
    )


def check_owned(folder: Path, what: str) -> None:
    """Refuse (exit 2) a folder trialbook does not own."""
    problem = ownership_problem(folder, what)
    if problem is not None:
        raise UsageError(problem)


def output_file_problem(path: Path, option: str) -> str | None:
    """Why ``path`` cannot become the file ``option`` asks for (naming both and the way out), or ``None``.

    Checked before a run starts, so a path that cannot be written (a folder in its place, a file where
    a folder must be, a folder that cannot be written in) costs no trial; a failure only the write itself
    finds is reported when the run ends.
    """
    try:
        if path.is_dir():
            return f"{option} {path}: is a folder; give the path of a file, such as {path / 'report.xml'}"
        for parent in path.parents:
            if not (parent.exists() or parent.is_symlink()):
                continue  # made when the file is written
            if not parent.is_dir():
                return f"{option} {path}: {parent} is not a folder; give a path inside a folder"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"{option} {path}: {parent} cannot be written in (permission denied); choose another"
            return None
    except OSError as exc:  # a name too long for the filesystem, a loop of links
        return f"{option} {path}: {exc.strerror or exc}; choose another path"
    return None


def _written(folder: Path) -> set[str]:
    """The top-level names trialbook wrote in ``folder`` (from its marker, or the legacy layout)."""
    marker = _read_marker(folder)
    wrote = marker.get("wrote") if marker is not None else None
    if isinstance(wrote, list):
        return {str(name) for name in wrote} | {MARKER}
    return set(_LEGACY) | {MARKER}


def write_marker(folder: Path, *, kind: str, wrote: list[str] | None = None) -> None:
    """Mark ``folder`` as trialbook's; ``pid`` lets a later run tell an abandoned staging folder."""
    data: dict[str, object] = {"trialbook": kind, "pid": os.getpid()}
    if wrote is not None:
        data["wrote"] = sorted(wrote)
    atomic_write_text(folder / MARKER, json.dumps(data, indent=2) + "\n")


def claim(folder: Path, kind: str) -> None:
    """Create ``folder`` (if needed) as trialbook's, with its marker and a ``.gitignore`` inside it."""
    check_owned(folder, "the folder")
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / MARKER).exists():
        write_marker(folder, kind=kind)
    if not (folder / ".gitignore").exists():
        # Results are artifacts, not sources; the ignore file lives inside the folder it ignores.
        atomic_write_text(folder / ".gitignore", _IGNORE)


@frozen_record
class StagedFolder(FrozenRecord):
    """A run being written at ``staging``; :meth:`commit` puts it at ``final``."""

    final: Path
    staging: Path
    run_id: str

    def commit(self) -> tuple[Path, str | None]:
        """Swap the finished run in; what the user put in the old folder moves over, the rest goes.

        The old folder is renamed aside before the new one is renamed into place, so at every moment the
        final path holds either the whole previous run or the whole new one (for an instant, nothing).

        Returns the final path, and why the run may not be on disk when flushing it reported a write
        error (else ``None``). Such a run is put in place all the same: its files read back whole until
        the machine goes down, and a run left unpublished would be lost for certain.
        """
        wrote = [entry.name for entry in self.staging.iterdir() if entry.name != MARKER]
        write_marker(self.staging, kind="run", wrote=wrote)
        problem: str | None = None
        # The trials' files skipped their own fsyncs (see trialbook.fsutil): all of them become durable
        # here, before the rename makes them the run.
        try:
            sync_folder(self.staging)
        except NotDurableError as exc:
            problem = exc.reason
        sync_later(self.staging, False)
        old = self.final.with_name(f".{self.final.name}.{self.run_id}.old")
        if self.final.is_dir():
            ours = _written(self.final)
            for entry in self.final.iterdir():
                if entry.name not in ours and not (self.staging / entry.name).exists():
                    entry.rename(self.staging / entry.name)  # the user's own file stays with the folder
            if any(self.final.iterdir()):
                self.final.rename(old)
            else:
                self.final.rmdir()
        self.staging.rename(self.final)
        try:
            sync_directory(self.final.parent, strict=True)
        except NotDurableError as exc:
            problem = problem or exc.reason
        if old.exists():
            shutil.rmtree(old, ignore_errors=True)
        return self.final, problem

    def abandon(self) -> None:
        """Remove the staging folder (nothing of the previous run is touched)."""
        sync_later(self.staging, False)
        shutil.rmtree(self.staging, ignore_errors=True)


def stage(final: Path, run_id: str) -> StagedFolder:
    """Start writing a run that will end up at ``final`` (which must be trialbook's, see :func:`check_owned`).

    The staging folder sits beside ``final`` as ``.<name>.<run id>.partial`` and is marked from the start,
    so an abandoned one (its process gone) is recognisably trialbook's and can be swept.
    """
    check_owned(final, "the results folder")
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep_partials(final.parent)
    staging = final.with_name(f".{final.name}.{run_id}.partial")
    staging.mkdir()
    sync_later(staging)
    write_marker(staging, kind="run")
    atomic_write_text(staging / ".gitignore", _IGNORE)
    return StagedFolder(final=final, staging=staging, run_id=run_id)


def sweep_partials(parent: Path) -> None:
    """Remove staging and swapped-out folders in ``parent`` whose trialbook process is gone."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            if not entry.name.startswith(".") or not entry.name.endswith((".partial", ".old")):
                continue
            marker = _read_marker(entry) if entry.is_dir() and not entry.is_symlink() else None
            if marker is not None and not pid_alive(marker.get("pid")):
                shutil.rmtree(entry, ignore_errors=True)
