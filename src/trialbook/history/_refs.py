"""Moving the history branch by compare-and-swap, the one way every local writer updates it.

``Repository.create_commit(ref, ...)`` is not a compare-and-swap when the ref does not exist yet:
libgit2 checks "the tip is the first parent" before taking the ref's lock and then writes the new
target unconditionally, so two processes making the branch's first commit at once both succeed and
one root commit is lost. Creating the commit unattached and then moving the ref under its lock,
after re-reading it, closes that window for the first commit and every later one.
"""

from __future__ import annotations

import pygit2

__all__ = ["commit_on", "move_ref", "ref_race"]


def ref_race(exc: Exception) -> bool:
    """Whether ``exc`` is another process holding a ref lock.

    libgit2 reports it as ``OSError`` from ``create_commit`` and as ``GitError`` ("failed to lock
    file", "failed to create locked file") from a ref transaction.
    """
    return isinstance(exc, OSError | pygit2.GitError) and "lock" in str(exc).lower()


class _Moved(Exception):
    pass


def move_ref(
    repo: pygit2.Repository, ref: str, expected: pygit2.Oid | None, new: pygit2.Oid, message: str
) -> bool:
    """Point ``ref`` at ``new`` only if it still points at ``expected`` (``None``: does not exist).

    Returns false when another writer moved the ref first or held its lock; any other failure (a
    read-only repository, a full disk) is raised, since retrying would meet it again.
    """
    try:
        with repo.transaction() as txn:
            txn.lock_ref(ref)
            current = repo.references.get(ref)
            if (current.target if current is not None else None) != expected:
                raise _Moved
            txn.set_target(ref, new, message=message)
    except _Moved:
        return False
    except (pygit2.GitError, OSError) as exc:
        if ref_race(exc):
            return False
        raise
    return True


def commit_on(
    repo: pygit2.Repository,
    ref: str,
    expected: pygit2.Oid | None,
    signature: pygit2.Signature,
    message: str,
    tree: pygit2.Oid,
    parents: list[pygit2.Oid],
) -> pygit2.Oid | None:
    """Commit ``tree`` and move ``ref`` to it if the ref is still at ``expected``; else ``None``.

    A lost race leaves only an unreachable commit object behind, which ``git gc`` removes.
    """
    oid = repo.create_commit(None, signature, signature, message, tree, parents)
    return oid if move_ref(repo, ref, expected, oid, message) else None
