"""The results folder is trialbook's alone: a marker says so, and only what trialbook wrote is ever removed.

A run is written into a staging folder beside its final place and swapped in only once it is complete, so
the previous run's results stay readable (and whole) until the new ones exist. A folder that holds files
but no marker belongs to someone else: trialbook refuses it rather than write into it or clear it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .._util.fsutil import (
    NAME_MAX,
    NotDurableError,
    atomic_write_text,
    sync_directory,
    sync_folder,
    sync_later,
)
from .._util.owner import OWNER_PATTERN, owner_gone, owner_tag, pid_alive
from ..errors import UsageError
from ..evidence import RUN_ID_PATTERN

__all__ = [
    "MARKER",
    "StagedFolder",
    "check_owned",
    "claim",
    "folder_lock",
    "is_owned",
    "leftover_name",
    "output_file_problem",
    "ownership_problem",
    "parents_problem",
    "pid_alive",
    "remove_folder",
    "stage",
    "sweep_partials",
    "unusable_path",
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


_KIND_NAMES = {"run": "a results folder (--results-dir)", "runs": "the folder of kept runs"}


def ownership_problem(folder: Path, what: str, kind: str | None = None) -> str | None:
    """Why trialbook may not write into ``folder`` (naming it and the way out), or ``None``.

    With ``kind`` (``run`` or ``runs``), a folder trialbook made as the other kind is refused too: a
    results folder swapped over the kept runs would treat them as the user's files, and the reverse.
    """
    if is_owned(folder):
        marker = _read_marker(folder) if kind is not None else None
        made = marker.get("trialbook") if marker is not None else None
        if made in _KIND_NAMES and made != kind:
            return f"{what} {folder} is {_KIND_NAMES[str(made)]} of trialbook's; choose another folder"
        return None
    state = "is not a folder" if not folder.is_dir() else "is not empty"
    return (
        f"{what} {folder} {state} and has no {MARKER} marker, so it is not trialbook's: trialbook writes "
        "only into a new or empty folder, or one it made itself. Choose another folder."
    )


def check_owned(folder: Path, what: str, kind: str | None = None) -> None:
    """Refuse (exit 2) a folder trialbook does not own (or made as the other ``kind``)."""
    problem = ownership_problem(folder, what, kind)
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
    except OSError as exc:  # a name too long for the filesystem, a loop of links
        return f"{option} {path}: {exc.strerror or exc}; choose another path"
    return parents_problem(path, option)


def unusable_path(path: Path, label: str) -> str | None:
    """Why ``path`` names nothing a run can use: a loop of links, a name too long; else ``None``.

    Checked first, before anything resolves or looks at the path, so such a path is an error naming it
    (exit 2) rather than a traceback from deep inside the run.
    """
    try:
        path.resolve()
        path.exists()
    except RuntimeError:  # Python 3.11's resolve() on a loop of links
        return f"{label} {path}: its symbolic links go round in a loop; choose another path"
    except OSError as exc:
        return f"{label} {path}: {exc.strerror or exc}; choose another path"
    return None


def parents_problem(path: Path, label: str) -> str | None:
    """Why nothing can be made at ``path``: the nearest existing folder above it is a file or read-only."""
    try:
        for parent in path.parents:
            if not (parent.exists() or parent.is_symlink()):
                continue  # made when the file is written
            if not parent.is_dir():
                return f"{label} {path}: {parent} is not a folder; give a path inside a folder"
            if not os.access(parent, os.W_OK | os.X_OK):
                return f"{label} {path}: {parent} cannot be written in (permission denied); choose another"
            return None
    except OSError as exc:  # a name too long for the filesystem, a loop of links
        return f"{label} {path}: {exc.strerror or exc}; choose another path"
    return None


def _written(folder: Path) -> set[str]:
    """The top-level names trialbook wrote in ``folder`` (from its marker, or the legacy layout)."""
    marker = _read_marker(folder)
    wrote = marker.get("wrote") if marker is not None else None
    if isinstance(wrote, list):
        return {str(name) for name in wrote} | {MARKER}
    return set(_LEGACY) | {MARKER}


def write_marker(
    folder: Path, *, kind: str, wrote: list[str] | None = None, final: str | None = None
) -> None:
    """Mark ``folder`` as trialbook's; ``pid`` lets a later run tell an abandoned staging folder.

    ``final`` is the name of the results folder a run is written for: a leftover whose own name had to
    be shortened is matched to its results folder by it, never by a shortened name two folders share.
    """
    data: dict[str, object] = {"trialbook": kind, "pid": os.getpid()}
    if final is not None:
        data["final"] = final
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


@dataclass(frozen=True)
class StagedFolder:
    """A run being written at ``staging``; :meth:`commit` puts it at ``final``."""

    final: Path
    staging: Path
    run_id: str

    def commit(self) -> tuple[Path, str | None]:
        """Swap the finished run in; what the user put in the old folder moves over, the rest goes.

        The staging folder, once flushed, is renamed ``.ready``; the old folder is renamed aside, the
        ready one into place, and only then are the user's own files moved over from the old folder and
        the rest removed. At every moment the final path holds either the whole previous run or the
        whole new one (for an instant, nothing), and nothing of the user's is ever inside a folder that
        may be removed. A kill at any step leaves names :func:`sweep_partials` finishes from.

        Returns the final path, and why the run may not be on disk when flushing it reported a write
        error (else ``None``). Such a run is put in place all the same: its files read back whole until
        the machine goes down, and a run left unpublished would be lost for certain.
        """
        wrote = [entry.name for entry in self.staging.iterdir() if entry.name != MARKER]
        write_marker(self.staging, kind="run", wrote=wrote, final=self.final.name)
        problem: str | None = None
        # The trials' files skipped their own fsyncs (see trialbook._util.fsutil): all of them become durable
        # here, before the rename makes them the run.
        try:
            sync_folder(self.staging)
        except NotDurableError as exc:
            problem = exc.reason
        sync_later(self.staging, False)
        ready = leftover_name(self.final, self.run_id, "ready")
        self.staging.rename(ready)  # complete (and flushed, unless the disk said otherwise): see _finish
        with folder_lock(self.final.parent):  # no sweep, and no other commit, renames anything meanwhile
            return self.final, _swap_in(ready, self.final, self.run_id) or problem

    def abandon(self) -> None:
        """Remove the staging folder (nothing of the previous run is touched)."""
        sync_later(self.staging, False)
        shutil.rmtree(self.staging, ignore_errors=True)


_KINDS = ("partial", "ready", "old", "gone")
"""A run's staging folder, the same once complete and flushed, the previous run swapped aside, and a
folder being removed, in the order a sweep handles them."""

_LEFTOVER = re.compile(
    rf"\.(?P<name>.*)\.(?P<run>{RUN_ID_PATTERN})\.(?P<owner>{OWNER_PATTERN})\.(?P<kind>{'|'.join(_KINDS)})",
    re.DOTALL,
)
_LEGACY_LEFTOVER = re.compile(rf"\.(?P<name>.+)\.(?P<run>{RUN_ID_PATTERN})\.(?:partial|old)", re.DOTALL)
"""The names of earlier trialbook versions, which carried no owner (their marker's pid says whose)."""

_HEAD_BYTES = NAME_MAX - len(".20261202T183055Z-abcdef.") - len(".partial") - 32
"""How much of ``.<final name>`` a leftover's name keeps: room for the run id, the longest kind and an
owner tag of up to 31 characters, so every leftover of one results folder has the same head."""


def _head(final: Path) -> str:
    raw = os.fsencode(f".{final.name}")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return os.fsdecode(raw[:_HEAD_BYTES])
    return raw[:_HEAD_BYTES].decode("utf-8", "ignore")  # cut between characters, not inside one


def _whole(head: str) -> bool:
    """Whether a leftover's head is ``.<name>`` unshortened.

    It is when it is too short to be a cut, which may end up to three bytes early, between characters.
    """
    return len(os.fsencode(head)) < _HEAD_BYTES - 3


def leftover_name(final: Path, run_id: str, kind: str) -> Path:
    """``.<name>.<run id>.<owner>.<kind>`` beside ``final``: whose it is, and what a sweep does with it.

    The owner tag (pid and start time, see :mod:`trialbook._util.owner`) tells a folder of a live run from
    one a killed run left; ``<name>`` is shortened where the whole would not fit in ``NAME_MAX`` bytes.
    """
    return final.with_name(f"{_head(final)}.{run_id}.{owner_tag()}.{kind}")


def _completed(folder: Path) -> int:
    """When the run in ``folder`` was completed: its marker is rewritten then (0 when there is none).

    Runs finish in another order than they start, so this, not the run id, says which is newer.
    """
    try:
        return (folder / MARKER).stat().st_mtime_ns
    except OSError:
        return 0


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock (``flock`` on the folder itself, so nothing is added to it).

    Commits and sweeps in one folder take turns: two sweeps finishing the same killed run, or a sweep
    and a commit, would each rename what the other is renaming. Where the folder cannot be opened or
    locked, nothing is held.
    """
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _swap_in(ready: Path, final: Path, run_id: str) -> str | None:
    """Put the complete run at ``ready`` at ``final``; why it may not be on disk, or ``None``."""
    old: Path | None = None
    if final.is_dir() and not final.is_symlink():
        if any(final.iterdir()):
            old = leftover_name(final, run_id, "old")
            final.rename(old)
        else:
            final.rmdir()
    ready.rename(final)
    problem: str | None = None
    try:
        sync_directory(final.parent, strict=True)
    except NotDurableError as exc:
        problem = exc.reason
    if old is not None:
        _hand_back(old, final, run_id)
    return problem


def _hand_back(old: Path, final: Path, run_id: str) -> None:
    """Move the user's own entries from the swapped-out ``old`` into ``final``, then remove ``old``.

    An entry whose name the new run wrote too is kept as ``<name>.previous`` (or with the run id after
    it). One that cannot be moved (a mount point) stays, and so does ``old``: nothing of the user's is
    removed.
    """
    ours = _written(old)
    left = False
    for entry in old.iterdir():
        if entry.name in ours:
            continue
        target = final / entry.name
        for other in (f"{entry.name}.previous", f"{entry.name}.previous-{run_id}"):
            if not (target.exists() or target.is_symlink()):
                break
            target = final / other
        try:
            if target.exists() or target.is_symlink():
                raise FileExistsError(target)
            entry.rename(target)
        except OSError:
            left = True
    if not left:
        remove_folder(old, final, run_id)


def remove_folder(folder: Path, final: Path, run_id: str) -> None:
    """Remove trialbook's ``folder`` by way of a ``.gone`` name, so a kill part way leaves a name swept."""
    gone = leftover_name(final, run_id, "gone")
    try:
        folder.rename(gone)
    except OSError:
        gone = folder
    shutil.rmtree(gone, ignore_errors=True)


def stage(final: Path, run_id: str) -> StagedFolder:
    """Start writing a run that will end up at ``final`` (which must be trialbook's, see :func:`check_owned`).

    The staging folder sits beside ``final`` as ``.<name>.<run id>.<owner>.partial`` and is marked from
    the start, so an abandoned one (its process gone) is recognisably trialbook's and can be swept.
    """
    check_owned(final, "the results folder")
    final.parent.mkdir(parents=True, exist_ok=True)
    sweep_partials(final.parent, final)
    staging = leftover_name(final, run_id, "partial")
    staging.mkdir()
    sync_later(staging)
    write_marker(staging, kind="run", final=final.name)
    atomic_write_text(staging / ".gitignore", _IGNORE)
    return StagedFolder(final=final, staging=staging, run_id=run_id)


def sweep_partials(parent: Path, final: Path | None = None) -> list[str]:
    """Finish or remove what killed runs left in ``parent``; nothing of a live run, or of the user's.

    Only names :func:`leftover_name` makes are touched, and only when their owner is gone: a staging
    folder (``.partial``, incomplete) and a folder being removed (``.gone``) are removed; a complete run
    (``.ready``) is put in place when its results folder is missing or holds an older run, else
    removed; a swapped-out previous run (``.old``) goes back in place when the results folder is
    missing, else hands the user's entries back to it. A leftover whose name had to be shortened
    belongs to the results folder its marker names. All of it under :func:`folder_lock`. ``final`` (the
    results folder the caller is about to write) is no longer needed and kept for callers.

    Returns what was done, one line each (for ``trialbook clean``).
    """
    with folder_lock(parent):
        try:
            entries = list(parent.iterdir())
        except OSError:
            return []
        done: list[str] = []
        found: dict[str, list[tuple[Path, str, Path | None]]] = {kind: [] for kind in _KINDS}
        legacy: list[Path] = []
        for entry in entries:
            match = _LEFTOVER.fullmatch(entry.name)
            if match is None:
                legacy.append(entry)
                continue
            if not owner_gone(match["owner"]) or entry.is_symlink() or not entry.is_dir():
                continue
            found[match["kind"]].append((entry, match["run"], _target(parent, entry, f".{match['name']}")))
        # Newest first: with its results folder gone, the latest previous run is the one put back.
        found["old"].sort(key=lambda item: _completed(item[0]), reverse=True)
        for kind in _KINDS:
            for entry, run_id, target in found[kind]:
                try:
                    what = _finish(kind, entry, run_id, target)
                except OSError as exc:
                    what = f"left {entry}: {exc.strerror or exc}"
                if what is not None:
                    done.append(what)
        done += [line for entry in sorted(legacy, key=_legacy_order) if (line := _sweep_legacy(entry))]
        return done


def _target(parent: Path, entry: Path, head: str) -> Path | None:
    """The results folder a leftover belongs to: its name, or its marker's word where it was shortened."""
    if _whole(head):
        return parent / head[1:]
    marker = _read_marker(entry)
    named = marker.get("final") if marker is not None else None
    if isinstance(named, str) and named and "/" not in named and _head(parent / named) == head:
        return parent / named
    return None  # which folder it belongs to is not known: finished by nobody, removed by nobody


def _finish(kind: str, entry: Path, run_id: str, final: Path | None) -> str | None:
    if kind in ("partial", "gone"):
        shutil.rmtree(entry, ignore_errors=True)
        return f"removed {entry}"
    if final is None:
        return None
    missing = not (final.exists() or final.is_symlink())
    if kind == "ready":
        if missing:
            entry.rename(final)
            return f"put the complete run {entry.name} in place at {final}"
        if final.is_dir() and not final.is_symlink() and is_owned(final):
            if _completed(final) < _completed(entry):  # the killed run's commit, finished
                _swap_in(entry, final, run_id)
                return f"put the complete run {entry.name} in place at {final}"
            remove_folder(entry, final, run_id)  # a run completed later is in place already
            return f"removed {entry}, completed before the run at {final}"
        return None
    if missing:  # "old": killed between its two renames, with no complete run to put in place
        entry.rename(final)
        return f"put the previous run {entry.name} back at {final}"
    if final.is_dir() and not final.is_symlink():
        _hand_back(entry, final, run_id)
        return f"moved the files of yours in {entry.name} back into {final}"
    return None


def _legacy_order(entry: Path) -> int:
    return 0 if entry.name.endswith(".partial") else 1  # a complete run before the one it replaced


def _sweep_legacy(entry: Path) -> str | None:
    """An earlier version's staging or swapped-out folder, once its marker's process is gone.

    That version moved the user's files into a complete staging folder (one whose marker lists what
    it wrote) before its swap: such a folder goes in place when its results folder is missing, or
    hands those files back to it. Then, like a swapped-out folder, it is removed.
    """
    match = _LEGACY_LEFTOVER.fullmatch(entry.name)
    if match is None or entry.is_symlink() or not entry.is_dir():
        return None
    marker = _read_marker(entry)
    if marker is None or pid_alive(marker.get("pid")):
        return None
    final = entry.with_name(match["name"])
    missing = not (final.exists() or final.is_symlink())
    complete = isinstance(marker.get("wrote"), list)
    if missing and (complete or entry.name.endswith(".old")):
        entry.rename(final)
        return f"put the run {entry.name} in place at {final}"
    if complete and final.is_dir() and not final.is_symlink():
        _hand_back(entry, final, match["run"])
        return f"moved the files of yours in {entry.name} back into {final}"
    shutil.rmtree(entry, ignore_errors=True)
    return f"removed {entry}"
