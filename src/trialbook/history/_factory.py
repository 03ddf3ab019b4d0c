"""Pick the history store the command line asked for."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from trialbook.errors import UsageError

if TYPE_CHECKING:
    from ._network import NetworkTimeouts
    from ._protocol import HistoryStore

__all__ = ["open_store"]


def open_store(
    *,
    history_dir: Path | None,
    history_branch: str | None,
    repo_path: Path,
    push: bool,
    token: str | None,
    offline: bool = False,
    timeouts: NetworkTimeouts | None = None,
) -> HistoryStore | None:
    """The store for ``--history-dir`` / ``--history-branch``, or ``None`` when history is off.

    With ``push`` the branch store syncs with ``origin``; without it, it still fetches from
    ``origin`` when there is one (so cache decisions see the shared history) but never pushes. With
    ``offline`` it talks to no remote at all and reads the local branch as it is.

    Raises:
        UsageError: both options given, ``--push`` without a branch, or a branch outside a repository.
    """
    if history_dir is not None and history_branch is not None:
        raise UsageError("--history-dir and --history-branch are alternatives; give only one")
    if history_dir is not None:
        if push:
            raise UsageError("--push shares a history branch; with --history-dir use --no-push")
        from ._directory import DirectoryStore

        return DirectoryStore(history_dir)
    if history_branch is None:
        if push:
            raise UsageError("--push needs --history-branch (for example trialbook-results)")
        return None
    # Only a branch store needs libgit2: a run without history, or with a folder, never loads it.
    import pygit2

    from ._git import GitBranchStore

    found = pygit2.discover_repository(str(repo_path))
    if found is None:
        raise UsageError(
            f"{repo_path.absolute()}: --history-branch needs a git repository here; run trialbook in a clone "
            "of yours (in GitHub Actions: `actions/checkout` with `fetch-depth: 0` before trialbook)"
        )
    has_origin = not offline and "origin" in pygit2.Repository(found).remotes.names()
    if push and not has_origin:
        raise UsageError("--push needs a remote named 'origin' to push the history branch to")
    return GitBranchStore(
        repo_path,
        history_branch,
        remote="origin" if has_origin else None,
        token=token,
        push=push,
        timeouts=timeouts,
    )
