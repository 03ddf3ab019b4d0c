"""History on a branch of the user's repository, written through the object database only.

Appends build blobs, trees and a commit directly on ``refs/heads/<branch>``; the user's work tree, index
and HEAD are never read or written, so a run in a dirty checkout leaves ``git status`` exactly as it was.
The branch is an orphan: its root commit has no parent and its tree holds only ``history/``.
"""

from __future__ import annotations

import os
import random
import time
from collections import defaultdict
from collections.abc import Collection, Sequence
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from trialbook.errors import UsageError

from ._auth import extraheader_for
from ._line import HistoryLine
from ._network import NetworkTimeouts
from ._paths import id_to_parts, parts_to_id
from ._protocol import HistoryError, SyncReport
from ._read import latest_line, parse_history
from ._refs import commit_on
from ._sync import sync_branch
from ._transport import Remote
from ._tree import HISTORY, TreeTooLarge, blob_at, history_files, subtree, write_files

__all__ = ["DEFAULT_BRANCH", "GitBranchStore", "default_signature"]

DEFAULT_BRANCH = "trialbook-results"
_LOCAL_ATTEMPTS = 200  # processes appending in one clone only race for microseconds per commit


def default_signature() -> pygit2.Signature:
    """The author of history commits; CI runners have no git identity configured."""
    return pygit2.Signature("trialbook", "trialbook@users.noreply.github.com")


class GitBranchStore:
    """History lines in ``history/<id>.jsonl`` on an orphan branch, shared through a remote.

    Args:
        repo_path: any folder inside the user's repository.
        branch: the history branch.
        remote: the remote to fetch from and push to; ``None`` keeps history local.
        token: a token for HTTPS remotes (sent as ``x-access-token`` basic auth).
        max_attempts: fetch-merge-push rounds before ``sync`` gives up.
        signature: author and committer of history commits.
        push: when false, ``sync`` fetches and merges but does not push.
        timeouts: connect and idle timeouts of every fetch and push.
    """

    def __init__(
        self,
        repo_path: Path,
        branch: str = DEFAULT_BRANCH,
        *,
        remote: str | None = "origin",
        token: str | None = None,
        max_attempts: int = 30,
        signature: pygit2.Signature | None = None,
        push: bool = True,
        timeouts: NetworkTimeouts | None = None,
    ) -> None:
        found = pygit2.discover_repository(str(repo_path))
        if found is None:
            raise UsageError(f"{repo_path}: not inside a git repository; history on a branch needs one")
        self.repo = pygit2.Repository(found)
        self.branch = branch
        self.ref = f"refs/heads/{branch}"
        if not pygit2.reference_is_valid_name(self.ref):
            raise UsageError(f"--history-branch {branch!r} is not a valid git branch name")
        if max_attempts < 1:
            raise UsageError("max_attempts must be at least 1")
        self.max_attempts = max_attempts
        self.signature = signature or default_signature()
        self.push_enabled = push
        self.timeouts = timeouts or NetworkTimeouts()
        self.remote = self._remote(remote, token)
        self.tracking_ref = f"refs/remotes/{remote}/{branch}" if remote else None
        self._problems: list[str] = []
        self._rng = random.Random(os.urandom(16))

    def _remote(self, name: str | None, token: str | None) -> Remote | None:
        if name is None:
            return None
        if name not in self.repo.remotes.names():
            raise UsageError(f"the repository has no remote named {name!r}; add it or turn pushing off")
        url = self.repo.remotes[name].url
        if not url:
            raise UsageError(f"the remote {name!r} has no URL")
        extraheader = None if token else extraheader_for(self.repo, url)
        return Remote(name, url, token, extraheader, timeouts=self.timeouts)

    @property
    def problems(self) -> list[str]:
        """Corrupt lines met while reading, each naming ``branch:path:line``."""
        return list(self._problems)

    def fetch_from(self, remote: Remote) -> None:
        """Fetch the history branch from ``remote``, keeping the repository handle the fetch returns."""
        self.repo = remote.fetch(self.repo, self.branch)

    def tip(self, ref: str | None) -> pygit2.Oid | None:
        """The commit ``ref`` points at, or ``None``."""
        found = self.repo.references.get(ref) if ref else None
        target = found.resolve().target if found is not None else None
        return target if isinstance(target, pygit2.Oid) else None

    def _base(self) -> pygit2.Commit | None:
        oid = self.tip(self.ref) or self.tip(self.tracking_ref)
        if oid is None:
            return None
        return self.repo[oid].peel(pygit2.Commit)

    def _history_tree(self) -> pygit2.Tree | None:
        base = self._base()
        return subtree(self.repo, base.tree, HISTORY) if base is not None else None

    def append(self, lines: Sequence[HistoryLine]) -> None:
        """Commit ``lines`` on the branch: one commit for the whole batch, parents never skipped.

        Lines the branch already holds (the same bytes; each line carries a unique ``run_id``) are not
        added again, so publishing one run's results twice records them once.

        The ref moves by compare-and-swap (``commit_on``), so two processes appending in the same
        repository cannot drop each other's commit, the first one included: the loser rebuilds on the
        new tip and retries.
        """
        if not lines:
            return
        self._refuse_checked_out_branch()
        texts: dict[tuple[str, ...], list[bytes]] = defaultdict(list)
        for line in lines:
            texts[id_to_parts(line.id)].append(line.to_json_line().encode())
        for _ in range(_LOCAL_ATTEMPTS):
            expected = self.tip(self.ref)
            base = self._base()
            tree = base.tree if base is not None else None
            history = subtree(self.repo, tree, HISTORY)
            files: dict[tuple[str, ...], pygit2.Oid] = {}
            added = 0
            for parts, batch in texts.items():
                old = blob_at(self.repo, history, parts) or b""
                known = set(old.split(b"\n"))
                new = list(dict.fromkeys(text for text in batch if text not in known))
                if not new:
                    continue
                if old and not old.endswith(b"\n"):
                    old += b"\n"
                files[parts] = self.repo.create_blob(old + b"\n".join(new) + b"\n")
                added += len(new)
            if not files:
                return  # every line is on the branch already: recording a run twice keeps it once
            message = f"trialbook: {added} history line(s) for {len(files)} eval(s)"
            root = self.repo.TreeBuilder(tree) if tree is not None else self.repo.TreeBuilder()
            root.insert(HISTORY, write_files(self.repo, history, files), FileMode.TREE)
            parents = [base.id] if base is not None else []
            if commit_on(self.repo, self.ref, expected, self.signature, message, root.write(), parents):
                return
            time.sleep(self._rng.uniform(0, 0.01))
        raise HistoryError(f"could not commit to {self.branch}: other processes kept moving it")

    def _refuse_checked_out_branch(self) -> None:
        head = self.repo.references.get("HEAD")
        if head is not None and head.target == self.ref:
            raise UsageError(
                f"the history branch {self.branch!r} is checked out here; trialbook writes it without a "
                "checkout, so switch to another branch first"
            )

    def read(self, eval_id: str) -> list[HistoryLine]:
        """Every valid line of ``eval_id`` on the local branch (or the fetched one before any append)."""
        parts = id_to_parts(eval_id)
        data = blob_at(self.repo, self._history_tree(), parts)
        return parse_history(data, self._where(parts), eval_id, self._problems) if data else []

    def latest(
        self,
        eval_id: str,
        agent: str,
        *,
        cache_key: str | None = None,
        verdicts: Collection[str] | None = None,
    ) -> HistoryLine | None:
        """The newest line of ``agent`` (with ``cache_key`` and one of ``verdicts``, when given).

        Parses only the winning line.
        """
        parts = id_to_parts(eval_id)
        data = blob_at(self.repo, self._history_tree(), parts)
        if not data:
            return None
        return latest_line(
            data, self._where(parts), eval_id, agent, self._problems, cache_key=cache_key, verdicts=verdicts
        )

    def ids(self) -> list[str]:
        """Every eval id with a history file on the branch (as far as the tree bounds let it be walked)."""
        found: list[str] = []
        try:
            for parts, _ in history_files(self._history_tree()):
                eval_id = parts_to_id(parts)
                if eval_id is not None:
                    found.append(eval_id)
        except TreeTooLarge as exc:
            problem = f"history branch {self.branch}: its tree holds {exc}; the rest of it was not read"
            if problem not in self._problems:
                self._problems.append(problem)
        return sorted(found)

    def sync(self) -> SyncReport:
        """Fetch the branch, unite diverged lines, push without force, retry when the remote moved.

        Raises:
            HistoryPushError: refused for good (a hook, permissions) or still racing after
                ``max_attempts``; the local commit stays.
            HistoryFetchError: the remote could not be reached, answered too slowly, or refused.
            HistoryAuthError: the remote refused the credentials.
        """
        if self.remote is None:
            return SyncReport(action="local-only", tip=_hex(self.tip(self.ref)))
        return sync_branch(self, self.remote, self._rng)

    def close(self) -> None:
        """Remove this writer's private ref from a path remote, if it made one."""
        if self.remote is not None:
            self.remote.close()

    def __enter__(self) -> GitBranchStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _where(self, parts: tuple[str, ...]) -> str:
        return f"{self.branch}:{HISTORY}/{'/'.join(parts)}"


def _hex(oid: pygit2.Oid | None) -> str | None:
    return str(oid) if oid is not None else None
