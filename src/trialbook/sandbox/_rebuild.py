"""Rebuild a trial's final sandbox: its starting files, then the change record (``changes.json``) applied.

The record comes from a run folder, which is data to be checked, not trusted: every path must be
relative and stay inside the workdir without passing through a link, every field must have its
documented type, and a file's content must match the hash recorded beside it. Anything else leaves the
path (or, for what the whole tree depends on, the rebuild) marked as not what the agent left.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["Rebuilt", "apply_changes"]

_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class Rebuilt:
    """What a rebuilt workdir can stand in for.

    ``problems`` say why the tree as a whole is not the agent's (a path the record could not name, a
    change it did not list): then no path of it can be trusted. ``missing`` maps the paths whose final
    state is unknown (content kept masked, past a limit) to why; every other path is as the agent left it.
    """

    problems: tuple[str, ...]
    missing: Mapping[str, str]

    @property
    def complete(self) -> bool:
        """Whether every path of the tree is known: no problem, and nothing missing."""
        return not self.problems and not self.missing


class _Bad(Exception):
    """A part of the record that is not what trialbook writes."""


def _relative(value: object) -> str:
    if not isinstance(value, str) or not value or "\0" in value:
        raise _Bad(f"path {value!r} is not a non-empty string")
    rel = PurePosixPath(value)
    if rel.is_absolute() or any(part in ("", ".", "..") for part in value.split("/")):
        raise _Bad(f"path {value!r} is not relative to the workdir without '.' or '..'")
    return value


def _parent(workdir: Path, rel: str, *, make: bool) -> Path:
    """The folder ``rel`` goes in, every component a real folder (made when ``make``), never a link."""
    current = workdir
    for part in PurePosixPath(rel).parts[:-1]:
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            if not make:
                raise _Bad(f"{rel}: its folder does not exist") from None
            current.mkdir()
            continue
        if not stat.S_ISDIR(info.st_mode):
            raise _Bad(f"{rel}: {current.relative_to(workdir)} is not a folder")
    return current / PurePosixPath(rel).name


def _clear(path: Path) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        raise _Bad(f"{path.name} is a folder where the record has a file")
    path.unlink()


def _content(final: Mapping[str, object], entry: Mapping[str, object]) -> bytes:
    text, encoded = final.get("text"), final.get("base64")
    if isinstance(text, str):
        data = text.encode("utf-8")
    elif isinstance(encoded, str):
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise _Bad("its base64 content does not decode") from None
    else:
        raise _Bad("it holds no content")
    after = entry.get("after")
    expected = after.get("sha256") if isinstance(after, dict) else None
    if hashlib.sha256(data).hexdigest() != expected:
        raise _Bad("its content does not match its recorded hash")
    return data


def _mode(final: Mapping[str, object]) -> int:
    mode = final.get("mode")
    if not isinstance(mode, str) or not mode.isdigit() or len(mode) > 4 or any(c in "89" for c in mode):
        raise _Bad(f"mode {mode!r} is not octal permission bits")
    return int(mode, 8)


def _write(workdir: Path, rel: str, final: Mapping[str, object], entry: Mapping[str, object]) -> None:
    kind = final.get("kind")
    if kind == "link":
        target = final.get("target")
        if not isinstance(target, str) or not target or "\0" in target:
            raise _Bad("its link target is not a non-empty string")
        path = _parent(workdir, rel, make=True)
        _clear(path)
        path.symlink_to(target)
        return
    if kind != "file":
        raise _Bad(f"kind {kind!r} is none of file, link, gone")
    data, mode = _content(final, entry), _mode(final)
    path = _parent(workdir, rel, make=True)
    _clear(path)
    fd = os.open(path, _WRITE_FLAGS, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)  # after writing: a read-only mode would not stop this process, but be exact
    finally:
        os.close(fd)


def _entries(record: Mapping[str, object]) -> list[tuple[str, Mapping[str, object], Mapping[str, object]]]:
    files = record.get("files")
    if not isinstance(files, list):
        raise _Bad("files is not a list")
    found: list[tuple[str, Mapping[str, object], Mapping[str, object]]] = []
    for index, entry in enumerate(files):
        final = entry.get("rebuild") if isinstance(entry, dict) else None
        if not isinstance(entry, dict) or not isinstance(final, dict):
            raise _Bad(f"files[{index}] has no rebuild object (recorded before rebuilding was possible)")
        found.append((_relative(entry.get("path")), final, entry))
    return found


def _folders(rebuild: Mapping[str, object], key: str) -> list[str]:
    value = rebuild.get(key)
    if not isinstance(value, list):
        raise _Bad(f"rebuild.{key} is not a list")
    return [_relative(item) for item in value]


def apply_changes(workdir: Path, record: object) -> Rebuilt:
    """Apply the change ``record`` to ``workdir``, which holds the trial's starting files.

    Deletions first, then the folders removed (deepest first) and made, then every file and link as
    the agent left it, with its permission bits. Never raises for a bad record: what it cannot apply
    comes back in :attr:`Rebuilt.problems` or :attr:`Rebuilt.missing`.
    """
    if not isinstance(record, dict):
        return Rebuilt(("changes.json is not a JSON object",), {})
    rebuild = record.get("rebuild")
    if not isinstance(rebuild, dict):
        return Rebuilt(("changes.json has no rebuild object (recorded before rebuilding was possible)",), {})
    problems = [f"changes.json: {p}" for p in rebuild.get("problems") or () if isinstance(p, str)]
    if rebuild.get("complete") is not True and not problems:
        problems.append("changes.json: the record says it is not complete")
    missing: dict[str, str] = {}
    try:
        entries = _entries(record)
        made, removed = _folders(rebuild, "folders_created"), _folders(rebuild, "folders_deleted")
        for rel, final, _ in entries:
            if final.get("kind") == "gone":
                _clear(_parent(workdir, rel, make=False))
        for rel in removed:
            os.rmdir(_parent(workdir, rel, make=False))
        for rel in sorted(made, key=lambda r: r.count("/")):
            path = _parent(workdir, rel, make=True)
            if not path.is_dir() or path.is_symlink():
                path.mkdir()
    except (_Bad, OSError) as exc:
        return Rebuilt((*problems, f"changes.json: {exc}"), missing)
    for rel, final, entry in entries:
        why = final.get("missing")
        if isinstance(why, str):
            missing[rel] = why
            continue
        if final.get("kind") == "gone":
            continue
        try:
            _write(workdir, rel, final, entry)
        except (_Bad, OSError) as exc:
            missing[rel] = f"it could not be rebuilt: {exc}"
    return Rebuilt(tuple(problems), missing)
