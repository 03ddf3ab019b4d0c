"""Fetch, unite, push, retry: how concurrent writers all land their lines on one remote branch.

Each round fetches the branch, compares the local and remote tips, and either does nothing,
fast-forwards, pushes, or first makes a union-merge commit with parents ``[ours, theirs]``. The push
never forces. A race (the remote moved between fetch and push, a ref lock was held) starts another
round after a jittered, capped backoff; the jitter keeps writers that collided from colliding again
in lockstep. Anything else (a hook declined the push, the remote is unreachable or too slow) would fail
the same way again, so it fails at once with the remote's reason.
"""

from __future__ import annotations

import contextlib
import random
import time
from typing import TYPE_CHECKING

import pygit2

from ._network import is_race
from ._protocol import HistoryAuthError, HistoryFetchError, HistoryPushError, SyncAction, SyncReport
from ._refs import commit_on, move_ref, ref_race
from ._transport import PushRejected, Remote
from ._tree import TreeTooLarge, merge_history_trees

if TYPE_CHECKING:
    from ._git import GitBranchStore

__all__ = ["backoff_s", "sync_branch"]

_BACKOFF_BASE_S = 0.05
_BACKOFF_CAP_S = 2.0
_TAKE_REMOTE = "trialbook: take the remote's history"


def backoff_s(attempt: int, rng: random.Random) -> float:
    """Seconds to wait after failed round ``attempt`` (1-based): uniform in ``[0, min(0.05*2^n, 2)]``."""
    return rng.uniform(0, min(_BACKOFF_BASE_S * 2**attempt, _BACKOFF_CAP_S))


def sync_branch(store: GitBranchStore, remote: Remote, rng: random.Random) -> SyncReport:
    """Run rounds until the remote holds every local line (or, with pushing off, the reverse)."""
    merges = 0
    last_error = "no attempt made"
    for attempt in range(1, store.max_attempts + 1):
        try:
            store.fetch_from(remote)
        except HistoryAuthError:
            raise
        except (pygit2.GitError, OSError) as exc:
            # Only a path remote races its fetches (refs listed, then one deleted before it is read).
            if remote.local_path is None or not (ref_race(exc) or is_race(str(exc))):
                raise HistoryFetchError(
                    f"could not fetch history branch {store.branch!r} from remote {remote.name!r} "
                    f"({remote.safe_url}): {remote.timeouts.explain(str(exc))}"
                ) from None
            last_error = f"fetch failed: {exc}"
            time.sleep(backoff_s(attempt, rng))
            continue
        local, theirs = store.tip(store.ref), store.tip(store.tracking_ref)
        if local is None and theirs is None:
            return SyncReport(action="nothing", attempts=attempt)
        if (
            local is None
            or local == theirs
            or (theirs is not None and store.repo.descendant_of(theirs, local))
        ):
            assert theirs is not None
            taken = local == theirs or move_ref(store.repo, store.ref, local, theirs, _TAKE_REMOTE)
            if not taken:
                continue  # a local append landed meanwhile; look again
            action: SyncAction = "up-to-date" if local == theirs else "fast-forwarded"
            if merges:
                action = "merged-and-pushed"
            return SyncReport(action=action, attempts=attempt, merges=merges, tip=str(theirs))
        if theirs is not None and not store.repo.descendant_of(local, theirs):
            merged = _merge(store, local, theirs)
            if merged is None:
                continue
            merges += 1
            local = merged
        if not store.push_enabled:
            return SyncReport(action="not-pushed", attempts=attempt, merges=merges, tip=str(local))
        try:
            remote.push(store.repo, store.branch, local)
        except HistoryAuthError:
            raise
        except (PushRejected, pygit2.GitError, OSError) as exc:
            race = exc.race if isinstance(exc, PushRejected) else ref_race(exc) or is_race(str(exc))
            if not race:
                reason = str(exc).rstrip(".")
                raise HistoryPushError(
                    f"remote {remote.name!r} ({remote.safe_url}) refused the history branch "
                    f"{store.branch!r}: {reason}. Not retried: the same push would be refused again. "
                    f"The lines stay committed on the local branch {store.branch!r} at "
                    f"{store.tip(store.ref)}; the next sync will push them."
                ) from None
            last_error = f"push rejected: {exc}"
            time.sleep(backoff_s(attempt, rng))
            continue
        assert store.tracking_ref is not None
        with contextlib.suppress(pygit2.GitError, OSError):
            # Only a cache of the remote's state; the next fetch rewrites it if this loses a race.
            store.repo.references.create(store.tracking_ref, local, force=True)
        action = "merged-and-pushed" if merges else "pushed"
        return SyncReport(action=action, attempts=attempt, merges=merges, tip=str(local))
    raise HistoryPushError(
        f"gave up sharing history branch {store.branch!r} with remote {remote.name!r} after "
        f"{store.max_attempts} attempts ({last_error}). The lines stay committed on the local branch "
        f"{store.branch!r} at {store.tip(store.ref)}; the next sync will push them."
    )


def _merge(store: GitBranchStore, ours: pygit2.Oid, theirs: pygit2.Oid) -> pygit2.Oid | None:
    """Commit the union of both sides on the local branch; ``None`` when a local append raced us."""
    repo = store.repo
    try:
        base_id = repo.merge_base(ours, theirs)
    except (pygit2.GitError, KeyError):
        base_id = None  # unrelated roots, or history cut short by a shallow fetch
    base_tree = repo[base_id].peel(pygit2.Tree) if base_id is not None else None
    our_tree, their_tree = repo[ours].peel(pygit2.Tree), repo[theirs].peel(pygit2.Tree)
    try:
        tree = merge_history_trees(repo, base_tree, our_tree, their_tree)
    except TreeTooLarge as exc:
        # A merge must hold every line of both sides; one that cannot read them all is not made.
        raise HistoryPushError(
            f"the remote history branch's tree holds {exc}: not merged, nothing pushed (the new lines "
            "stay in the local branch and the run's results)"
        ) from None
    message = "trialbook: unite history lines with the remote"
    return commit_on(repo, store.ref, ours, store.signature, message, tree, [ours, theirs])
