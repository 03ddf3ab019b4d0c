"""Shims over the real binaries' own paths, so a call by absolute path is recorded like one found on PATH.

Without isolation a shim is only first on ``PATH``: ``npm`` runs it, ``/usr/bin/npm`` runs the real
binary unrecorded. Under bubblewrap the trial has its own mount namespace, so each shim is also bound
over every binary of its name on the trial's ``PATH`` and in the usual system folders
(:data:`USUAL_BIN_DIRS`). A mount follows links, so what is covered is the file a link resolves to
(``/usr/bin/npm`` names ``/usr/lib/node_modules/npm/bin/npm-cli.js``, and that file is covered): every
name of the binary runs the shim.

A passthrough shim still has to run the real binary, now covered at each of its paths. bubblewrap reads
bind sources from the host's own tree, where no cover is, so the folder holding the real binary is
bound a second time, read-only, under the trial folder's ``real/``, and the shim runs it from there
(``real/usr/lib/node_modules/npm/bin/npm-cli.js``: the package's own relative paths still resolve).
That route is written into the shim, so an agent that reads the shim can take it too: the covers make
calls recorded, not impossible. A binary inside a place the trial must not see gets no second view
(its folder would show what is hidden); the trial did not see it before either.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REAL_VIEWS",
    "USUAL_BIN_DIRS",
    "ShimCover",
    "cover_args",
    "cover_pairs",
    "real_routes",
    "shim_cover",
    "view_args",
]

USUAL_BIN_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
"""Where a binary is called by its absolute path even when the trial's ``PATH`` names other folders."""

REAL_VIEWS = "real"
"""The folder in the trial folder under which passthrough shims find their real binaries when covered."""


@dataclass(frozen=True)
class ShimCover:
    """One shim and the files it covers under isolation: ``real`` is what a passthrough shim runs."""

    shim: Path
    targets: tuple[Path, ...]
    """The resolved paths of every binary of the shim's name on ``PATH`` and in the usual folders."""
    reals: tuple[Path, ...] = ()
    """For a passthrough shim, the resolved paths of the binaries it may run, in ``PATH`` order (the first
    one shown under ``real/`` is run: one in a hidden place is not shown); empty for a stub."""


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _folders(search_path: str, shim_dir: Path) -> list[str]:
    own = str(shim_dir)
    return [d for d in search_path.split(os.pathsep) if d and os.path.isabs(d) and d != own]


def _found(name: str, folders: Iterable[str]) -> tuple[Path, ...]:
    found: dict[Path, None] = {}
    for folder in folders:
        candidate = os.path.join(folder, name)
        if _executable(candidate):
            found[Path(os.path.realpath(candidate))] = None
    return tuple(found)


def shim_cover(shim: Path, search_path: str, *, passthrough: bool) -> ShimCover:
    """Every file the shim at ``shim`` should cover, found on ``search_path`` and in the usual folders."""
    on_path = _folders(search_path, shim.parent)
    targets = _found(shim.name, dict.fromkeys([*on_path, *USUAL_BIN_DIRS]))
    return ShimCover(shim=shim, targets=targets, reals=_found(shim.name, on_path) if passthrough else ())


def real_routes(cover: ShimCover, root: Path) -> tuple[Path, ...]:
    """Where a covered passthrough shim looks for its real binaries inside the trial: under ``real/``."""
    return tuple(root / REAL_VIEWS / real.relative_to("/") for real in cover.reals)


def _inside(path: Path, places: Iterable[Path]) -> bool:
    return any(path == place or place in path.parents for place in places)


def _view(real: Path, hidden: Sequence[Path]) -> Path | None:
    """The folder to show under ``real/`` so ``real`` runs: its top folder, else its own, if neither hides."""
    for folder in (Path(*real.parts[:2]), real.parent):
        holds_hidden = any(folder in place.parents for place in hidden)
        if not _inside(folder, hidden) and not holds_hidden and folder != Path("/"):
            return folder
    return None


def view_args(covers: Sequence[ShimCover], root: Path, hidden: Sequence[Path]) -> list[str]:
    """Bubblewrap's arguments showing the real binaries' folders under ``real/``; after ``root`` is bound."""
    views: dict[Path, None] = {}
    for real in (real for cover in covers for real in cover.reals):
        if (view := _view(real, hidden)) is not None:
            views[view] = None
    args: list[str] = []
    for view in views:
        args += ["--ro-bind", str(view), f"{root}/{REAL_VIEWS}{view}"]
    return args


def cover_pairs(covers: Sequence[ShimCover], root: Path, hidden: Sequence[Path]) -> list[tuple[Path, Path]]:
    """Each ``(shim, file)`` to bind the shim over; a file hidden, or the trial's own, is left out."""
    return [
        (cover.shim, target)
        for cover in covers
        for target in cover.targets
        if not _inside(target, (*hidden, root))
    ]


def cover_args(covers: Sequence[ShimCover], root: Path, hidden: Sequence[Path]) -> list[str]:
    """Bubblewrap's arguments for the covers and the real binaries' views; after ``root`` is bound."""
    args = view_args(covers, root, hidden)
    for shim, target in cover_pairs(covers, root, hidden):
        args += ["--ro-bind", str(shim), str(target)]
    return args
