"""Fetching and pushing one branch, with the libgit2 transport quirks handled.

Path remotes (``/srv/git/repo.git``, ``file://...``) get a compare-and-swap push. libgit2's local
transport force-writes the remote ref: its only fast-forward check runs against the value read at
connect, so a writer that pushed in between is silently overwritten and its lines are lost. Testing
only against ``git daemon`` would leave that hole open for anyone sharing history through a folder
(a network drive, a mounted volume), so instead each store pushes its objects to a private ref
``refs/trialbook/writers/<uuid>`` and then moves the branch itself under the bare repository's
reference lock, only if the move is a fast-forward. That is the same rule ``receive-pack`` applies.
The private ref is stable for the store's life and deleted on ``close()``: deleting it after every
push made other writers' fetches fail (the local transport lists refs, then resolves each one).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pygit2

from ._auth import Callbacks, safe_url
from ._network import NetworkTimeouts, is_race
from ._refs import ref_race

__all__ = ["PushRejected", "Remote"]

_SCP_LIKE = re.compile(r"^[^/]+:")


class PushRejected(Exception):
    """The remote refused the update (it moved, a hook declined, or its ref lock was held).

    ``race`` says whether another round can succeed: the branch moved or a lock was held. A hook's
    refusal or a permission error is not a race and is never retried.
    """

    def __init__(self, message: str, *, race: bool | None = None) -> None:
        super().__init__(message)
        self.race = is_race(message) if race is None else race


def _with_remote_text(message: str, callbacks: Callbacks) -> str:
    said = callbacks.remote_messages
    return f"{message} (the remote said: {said})" if said and said not in message else message


@dataclass
class Remote:
    """One remote of the user's repository, as used for the history branch."""

    name: str
    url: str
    # Kept out of repr so that logging a store or a remote can never print a credential.
    token: str | None = field(repr=False)
    extraheader: str | None = field(repr=False)
    timeouts: NetworkTimeouts = field(default_factory=NetworkTimeouts)

    def __post_init__(self) -> None:
        self.local_path = _local_path(self.url)
        self.writer_ref = f"refs/trialbook/writers/{uuid.uuid4().hex}"
        self._pushed_writer_ref = False

    @property
    def safe_url(self) -> str:
        """The URL without any credentials in it, for messages."""
        return safe_url(self.url)

    def callbacks(self) -> Callbacks:
        """Fresh callbacks for one operation."""
        return Callbacks(token=self.token, extraheader=self.extraheader, url=self.url)

    def fetch(self, repo: pygit2.Repository, branch: str) -> pygit2.Repository:
        """Fetch only ``branch`` into ``refs/remotes/<name>/<branch>``; returns the repository to use next.

        The returned repository is a fresh handle when ``.git/shallow`` had to be restored: libgit2 caches
        the shallow grafts, and a stale cache makes the next push fail with "object not found".
        """
        spec = f"+refs/heads/{branch}:refs/remotes/{self.name}/{branch}"
        shallow = Path(repo.path) / "shallow"
        saved = shallow.read_bytes() if self.local_path is not None and shallow.exists() else None
        self.timeouts.apply()
        try:
            repo.remotes[self.name].fetch([spec], callbacks=self.callbacks())
        finally:
            if saved is not None and (not shallow.exists() or shallow.read_bytes() != saved):
                # The local transport reports no shallow roots and so deletes the file (libgit2 < smart
                # transports' fix); git then cannot read the parents it never had.
                shallow.write_bytes(saved)
                repo = pygit2.Repository(repo.path)
        return repo

    def push(self, repo: pygit2.Repository, branch: str, new: pygit2.Oid) -> None:
        """Push ``new`` to the remote branch, only as a fast-forward from the remote's state.

        Raises:
            PushRejected: the remote did not take the update; fetch, merge and try again.
        """
        remote = repo.remotes[self.name]
        callbacks = self.callbacks()
        ref = f"refs/heads/{branch}"
        self.timeouts.apply()
        if self.local_path is None:
            try:
                remote.push([f"refs/heads/{branch}:{ref}"], callbacks=callbacks)
            except pygit2.GitError as exc:
                message = self.timeouts.explain(str(exc))
                raise PushRejected(_with_remote_text(message, callbacks)) from None
            if callbacks.rejections:
                reasons = "; ".join(f"{name}: {why}" for name, why in callbacks.rejections)
                raise PushRejected(_with_remote_text(reasons, callbacks))
            return
        try:
            remote.push([f"+refs/heads/{branch}:{self.writer_ref}"], callbacks=callbacks)
        except (pygit2.GitError, OSError) as exc:
            raise PushRejected(str(exc)) from None
        self._pushed_writer_ref = True
        _compare_and_swap(self.local_path, ref, new)

    def close(self) -> None:
        """Delete this writer's private ref from a path remote."""
        if self.local_path is None or not self._pushed_writer_ref:
            return
        try:
            target = pygit2.Repository(str(self.local_path))
            if target.references.get(self.writer_ref) is not None:
                target.references.delete(self.writer_ref)
        except (pygit2.GitError, KeyError):
            pass  # a leftover private ref is harmless; the branch itself is correct
        self._pushed_writer_ref = False


def _compare_and_swap(path: Path, ref: str, new: pygit2.Oid) -> None:
    target = pygit2.Repository(str(path))
    try:
        with target.transaction() as txn:
            txn.lock_ref(ref)
            current = target.references.get(ref)
            if current is not None:
                tip = current.target
                if not isinstance(tip, pygit2.Oid) or not (tip == new or target.descendant_of(new, tip)):
                    raise PushRejected(f"{ref} moved on the remote", race=True)
            txn.set_target(ref, new, message="trialbook: history push")
    except (pygit2.GitError, OSError) as exc:
        # Most often another writer holding the ref lock; the next round will see its result.
        raise PushRejected(str(exc), race=ref_race(exc) or is_race(str(exc))) from None


def _local_path(url: str) -> Path | None:
    """The folder of a path or ``file://`` remote, ``None`` for network remotes."""
    if url.startswith("file://"):
        return Path(unquote(url[len("file://") :]))
    if "://" in url or _SCP_LIKE.match(url):
        return None
    return Path(url)
