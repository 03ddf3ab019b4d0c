"""Writes outside the sandbox under bubblewrap: kept in the trial's own folder, listed, never on the host.

Everything a trial can write outside its project folder (``work/``) lands in its trial folder, and the
listing after the trial (:func:`outside_writes`) is the evidence's ``outside_writes``:

- its own ``HOME`` and ``TMPDIR`` are folders of the trial folder already; what is new or changed there
  since its first process started (the adapter's own setup is not the agent's doing) is listed as
  ``~/...`` and ``$TMPDIR/...``;
- the host's places it must not see (the runner's ``HOME``, ``/tmp``, ``RUNNER_TEMP``, trialbook's
  virtualenv, the results) are covered by empty folders under ``outside/cover/`` instead of in-memory
  ones, so what the agent writes there is kept to be listed under the path it wrote (``/root/.bashrc``);
- the system's top folders (``/etc``, ``/usr``, ``/var``, ``/opt``...) get a writable overlay layer
  (``outside/upper/``) where the kernel lets an unprivileged user mount one in the trial's user
  namespace (Linux 5.11 on). bubblewrap 0.8 cannot mount overlays itself, so the trial's first process is
  ``_inside``, a short Python program holding ``CAP_SYS_ADMIN`` in that namespace only: it mounts the
  layers, binds the shims over the real binaries again (an overlay hides the mounts below it), drops
  every capability for good, checks that it did, and runs the agent. A top folder that holds
  a mount of the host or a hidden place stays read-only instead (a layer would show what the mount
  hides), and so does everything when no system Python (``/usr/bin/python3``) is there to mount with:
  a write then fails with ``Read-only file system`` and is not listed.

The agent owns its trial folder, so it can also change this record of itself: like the rest of its
evidence, the listing tells what happened to a careful reader, not what an adversary must admit.
"""

from __future__ import annotations

import functools
import json
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..evidence import OutsideWrite

__all__ = [
    "OUTSIDE",
    "cover_folder",
    "layer_spec",
    "outside_writes",
    "prepare_outside",
    "system_layers",
    "system_python",
]

OUTSIDE = "outside"
"""The folder of the trial folder that holds what the trial wrote outside it (see the module docstring)."""
LISTED_AT_MOST = 200
"""Entries kept in the evidence; a run that writes thousands (a package cache) is summarised by the first."""
_NEVER_LAYERED = frozenset({"proc", "sys", "dev", "tmp", "run", "lost+found"})
"""Top folders bubblewrap sets up itself or that hold only the running system's state."""


def cover_folder(root: Path, place: Path) -> Path:
    """The folder of the trial folder that stands in for the hidden ``place`` (``/tmp``, the host's home)."""
    return root / OUTSIDE / "cover" / place.relative_to("/")


@functools.cache
def _host_mounts() -> tuple[Path, ...]:
    """Where the host has mounts (bubblewrap's ``--ro-bind / /`` takes them along)."""
    try:
        text = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return (Path("/"),)  # unknown: every top folder counts as holding a mount, none is layered
    points = [line.split()[4] for line in text.splitlines() if len(line.split()) > 4]
    return tuple(Path(point.encode().decode("unicode_escape")) for point in points)


def system_python() -> str | None:
    """The system's Python, which can run ``_inside`` in a trial (trialbook's own is hidden there)."""
    for candidate in ("/usr/bin/python3", "/bin/python3"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _overlay_safe(path: Path) -> bool:
    # The overlay's options are a comma-separated list; a path with one of these cannot be named in it.
    return not any(char in str(path) for char in ",:\\=")


def system_layers(root: Path, hidden: Sequence[Path]) -> tuple[Path, ...]:
    """The top folders that get a writable layer: none holds a host mount, a hidden place or the trial."""
    if not _overlay_safe(root):
        return ()
    protected = (*hidden, root, *(point for point in _host_mounts() if point != Path("/")))
    found = []
    for entry in sorted(os.scandir("/"), key=lambda e: e.name):
        top = Path(entry.path)
        if entry.name in _NEVER_LAYERED or not entry.is_dir(follow_symlinks=False) or not _overlay_safe(top):
            continue
        if any(place == top or top in place.parents or place in top.parents for place in protected):
            continue
        found.append(top)
    return tuple(found)


def layer_spec(root: Path, layers: Sequence[Path]) -> list[str]:
    """``_inside``'s settings for each layered top folder: ``layer FOLDER UPPER WORK``."""
    settings: list[str] = []
    for top in layers:
        upper, work = root / OUTSIDE / "upper" / top.name, root / OUTSIDE / "work" / top.name
        settings += ["layer", str(top), str(upper), str(work)]
    return settings


def _own_folders(root: Path) -> dict[str, Path]:
    # The trial's own HOME and TMPDIR, as ``_sandbox`` lays the trial folder out.
    return {"~": root / "home", "$TMPDIR": root / "tmp"}


def _baseline_file(root: Path) -> Path:
    return root / OUTSIDE / "before.json"


def prepare_outside(root: Path, places: Sequence[Path]) -> None:
    """Make the cover folders of ``places``; the first time, note what HOME and TMPDIR hold already."""
    for place in places:
        cover_folder(root, place).mkdir(parents=True, exist_ok=True)
    baseline = _baseline_file(root)
    if baseline.exists():
        return
    seen = {
        f"{label}/{relative}": [size, mtime]
        for label, folder in _own_folders(root).items()
        for relative, size, mtime, _ in _walk(folder)
    }
    baseline.write_text(json.dumps(seen), encoding="utf-8")


def _walk(folder: Path) -> Iterator[tuple[str, int, int, bool]]:
    """``(relative path, size, mtime_ns, removed)`` of every non-folder under ``folder``, links unfollowed."""
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(entry.path))
                continue
            # An overlay marks a removed file with a character device 0:0 (a "whiteout").
            removed = stat.S_ISCHR(info.st_mode) and info.st_rdev == 0
            relative = os.path.relpath(entry.path, folder)
            yield relative, 0 if removed else info.st_size, info.st_mtime_ns, removed


def outside_writes(root: Path, places: Sequence[Path]) -> tuple[OutsideWrite, ...]:
    """What the trial wrote outside its project folder, by the paths it wrote (at most 200, sorted)."""
    found: dict[str, OutsideWrite] = {}
    try:
        before = json.loads(_baseline_file(root).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ()  # no process of the trial started isolated, so none wrote anything
    except (OSError, ValueError):
        before = {}
    for label, folder in _own_folders(root).items():
        for relative, size, mtime, _ in _walk(folder):
            path = f"{label}/{relative}"
            if before.get(path) != [size, mtime]:
                found[path] = OutsideWrite(path, size)
    for path in before:
        label, _, relative = path.partition("/")
        own = _own_folders(root).get(label)
        if own is not None and path not in found and not os.path.lexists(own / relative):
            found[path] = OutsideWrite(path, 0, removed=True)
    for place in places:
        for relative, size, _, removed in _walk(cover_folder(root, place)):
            path = str(place / relative)
            found[path] = OutsideWrite(path, size, removed)
    upper = root / OUTSIDE / "upper"
    for relative, size, _, removed in _walk(upper):
        path = "/" + relative
        found[path] = OutsideWrite(path, size, removed)
    return tuple(found[path] for path in sorted(found)[:LISTED_AT_MOST])
