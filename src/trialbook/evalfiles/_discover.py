"""Finding eval files under the paths a user gave, and the id each one gets from its place."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ._problems import display_path

__all__ = ["EVAL_SUFFIXES", "Found", "discover", "discover_eval_files", "duplicate_ids"]

EVAL_SUFFIXES = (".eval.yaml", ".eval.yml", ".eval.py")
_SKIPPED_FOLDERS = {"node_modules", "__pycache__"}
"""Folders never searched, besides hidden ones: they hold installed code, not the user's evals."""


@dataclass(frozen=True)
class Found:
    """An eval file, the evals folder it was found under, and the id its path gives it."""

    path: Path
    root: Path
    id: str


def _id(path: Path, root: Path) -> str:
    relative = path.relative_to(root).as_posix()
    for suffix in EVAL_SUFFIXES:
        if relative.endswith(suffix):
            return relative[: -len(suffix)]
    return relative.rpartition(".")[0] or relative


def _walk(folder: Path) -> list[Path]:
    found: list[Path] = []
    for current, folders, files in os.walk(folder):
        folders[:] = sorted(
            name for name in folders if not name.startswith(".") and name not in _SKIPPED_FOLDERS
        )
        found.extend(Path(current, name) for name in files if name.endswith(EVAL_SUFFIXES))
    return found


def discover(paths: Sequence[Path]) -> tuple[list[Found], list[str]]:
    """The eval files under ``paths`` sorted by path, and the paths that do not exist, as problems.

    A file given directly is taken whatever its name, with its id relative to its own folder; a folder is
    searched recursively for ``*.eval.yaml``, ``*.eval.yml`` and ``*.eval.py``. A file reached twice is
    kept once, with the id of the first path that reached it.
    """
    problems: list[str] = []
    found: dict[Path, Found] = {}
    for given in paths:
        absolute = Path(os.path.abspath(given))
        if absolute.is_file():
            candidates, root = [absolute], absolute.parent
        elif absolute.is_dir():
            candidates, root = _walk(absolute), absolute
        else:
            problems.append(f"{given}: no such file or folder (give an eval file or a folder of them)")
            continue
        for path in candidates:
            found.setdefault(path, Found(path, root, _id(path, root)))
    return sorted(found.values(), key=lambda entry: entry.path.as_posix()), problems


def duplicate_ids(entries: Sequence[tuple[str, Path, int]]) -> list[str]:
    """A problem for each ``(id, file, line)`` whose id an earlier entry already has, naming both files."""
    first_of: dict[str, Path] = {}
    problems = []
    for eval_id, path, line in entries:
        if eval_id in first_of:
            other = display_path(first_of[eval_id])
            problems.append(
                f"{display_path(path)}:{line}: id: the id {eval_id!r} is also used by {other} "
                "(rename one of the files, or set a different id: in one of them)"
            )
        else:
            first_of[eval_id] = path
    return problems


def discover_eval_files(paths: Sequence[Path]) -> list[Path]:
    """The eval files under ``paths``, sorted; see :func:`discover` for the rules.

    Raises:
        ConfigError: a path does not exist, or two files would get the same id.
    """
    found, problems = discover(paths)
    problems += duplicate_ids([(entry.id, entry.path, 1) for entry in found])
    if problems:
        raise ConfigError(problems)
    return [entry.path for entry in found]
