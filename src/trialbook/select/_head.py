"""The commit HEAD names, for a run's metadata: read from the repository's own files when they are plain.

Every run records the commit it ran at (``suite.json``, the manifest, history lines). Opening the
repository with libgit2 for that one value cost a local one-trial run more CPU than its trial: importing
pygit2 alone is about 0.1 s. So the layouts git itself writes are read directly: a ``.git`` folder or a
``.git`` file (worktrees, submodules, ``--separate-git-dir``), HEAD detached or naming a branch, the
branch as a loose ref or in ``packed-refs``, no branch yet (unborn). Anything else (a bare repository,
reftable refs, a symbolic ref that is not a branch, a file that does not parse) is left to libgit2,
which answers as it always did. Discovery follows libgit2's: upwards from the folder, never across a
file-system boundary.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["head_commit"]

_OBJECT_ID = r"[0-9a-f]{40}|[0-9a-f]{64}"  # compiled (and cached by ``re``) on first use


class _AskLibgit2(Exception):
    """The files are not in a layout read here; libgit2 decides."""


def head_commit(path: Path) -> str | None:
    """The commit HEAD points at, or ``None`` outside a repository, before the first commit, or unreadable."""
    try:
        return _from_files(path)
    except (_AskLibgit2, OSError, UnicodeDecodeError):
        return _from_libgit2(path)


def _from_libgit2(path: Path) -> str | None:
    import pygit2

    try:
        found = pygit2.discover_repository(str(path))
        if found is None:
            return None
        repo = pygit2.Repository(found)
        if repo.head_is_unborn:
            return None
        return str(repo.head.target)
    except (pygit2.GitError, KeyError, ValueError, OSError):
        return None  # metadata: an unreadable repository leaves the commit unknown, it does not stop a run


def _git_dir(start: Path) -> Path | None:
    """The git folder of the repository holding ``start``, ``None`` outside one."""
    here = Path(os.path.realpath(start))
    device = here.stat().st_dev
    for folder in (here, *here.parents):
        if folder.stat().st_dev != device:
            return None  # libgit2 does not look across a file-system boundary
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir:"):
                raise _AskLibgit2
            return folder / text.removeprefix("gitdir:").strip()
        if (folder / "HEAD").is_file() and (folder / "objects").is_dir():
            raise _AskLibgit2  # inside a bare repository or a git folder itself
    return None


def _from_files(start: Path) -> str | None:
    git_dir = _git_dir(start)
    if git_dir is None:
        return None
    head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    if re.fullmatch(_OBJECT_ID, head):
        return head
    ref = head.removeprefix("ref:").strip()
    if not head.startswith("ref:") or not ref.startswith("refs/heads/") or ".." in ref.split("/"):
        raise _AskLibgit2
    common = git_dir
    if (git_dir / "commondir").is_file():  # a worktree: branches live in the main repository's folder
        common = git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()
    if (common / "reftable").exists() or not (common / "objects").is_dir():
        raise _AskLibgit2
    loose = common / ref
    if loose.is_file():
        target = loose.read_text(encoding="utf-8").strip()
        if not re.fullmatch(_OBJECT_ID, target):
            raise _AskLibgit2
        return target
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            target, _, name = line.partition(" ")
            if name.strip() == ref:
                if not re.fullmatch(_OBJECT_ID, target):
                    raise _AskLibgit2
                return target
    return None  # HEAD names a branch with no commit yet
