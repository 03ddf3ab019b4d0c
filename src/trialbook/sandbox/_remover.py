"""Remove finished trials' sandboxes in the background, so a trial's slot is free before its folder is gone.

Removing a sandbox is a dozen ``rmdir`` calls, and on a filesystem mounted with ``discard`` each one
waits for the disk (milliseconds apiece): done inside the trial, that wait holds one of the run's
``concurrency`` slots while no agent runs in it. The runner kills a trial's processes first, then hands
the folder to a :class:`SandboxRemover` and starts the next trial at once.

Nothing is given up: :meth:`SandboxRemover.close` waits for every removal before the run reports, and
returns the ones that failed for the run to report (an agent can make its folder unremovable, ``chattr
+i`` as root, and that must not cost the run its verdicts); at most ``limit`` folders wait at once (a
trial that would queue one more waits for room), so a slow disk cannot pile up sandboxes; and a run
killed meanwhile leaves folders named after its process, which the next run's sweep removes (see
:mod:`trialbook.sandbox.leftovers`).

With ``keep`` the remover empties a finished trial's folders instead, and keeps up to ``keep`` of them
for :meth:`SandboxRemover.take` to hand to the next trial, when they pass for fresh ones (see
:mod:`trialbook.sandbox._shell`); :meth:`SandboxRemover.close` removes those it still holds. Told how
many trials may still ask (``wanted``), the remover stops emptying folders once every one of them has:
a folder nobody will take is removed at once, less work than emptying it first (the last trials of
every run, and both folders of a one-trial eval and its negative control).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ._sandbox import Sandbox, real_parent, remove_tree
from ._shell import Shell, reset_shell

__all__ = ["SandboxRemover"]


class SandboxRemover:
    """Removes sandboxes on threads of its own, at most ``limit`` waiting."""

    def __init__(
        self,
        limit: int,
        workers: int = 2,
        keep: int = 0,
        wanted: int | None = None,
    ) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="trialbook-remove")
        self._room = threading.BoundedSemaphore(max(1, limit))
        self._lock = threading.Lock()
        self._errors: list[str] = []
        self._closed = False
        self._keep = max(0, keep)
        self._shells: dict[Path, list[Shell]] = {}
        self._parents: dict[Path | None, Path] = {}
        self._wanted = wanted  # calls of take() still to come; None: unknown, keep folders for reuse

    @property
    def keeps(self) -> bool:
        """Whether finished trials' folders are kept for reuse (mark them when made: ``reusable``)."""
        return self._keep > 0

    def take(self, root: Path | None) -> Shell | None:
        """A kept trial folder inside ``root`` (the system temp folder when ``None``), if one is ready."""
        if not self._keep:
            return None
        parent = self._parents.get(root)
        if parent is None:
            parent = self._parents[root] = real_parent(root)
        with self._lock:
            if self._wanted is not None:
                self._wanted = max(0, self._wanted - 1)
            shells = self._shells.get(parent)
            return shells.pop() if shells else None

    def remove(self, sandbox: Sandbox) -> None:
        """Queue ``sandbox`` for removal; blocks while ``limit`` removals are already waiting.

        Once the remover is closed the sandbox is removed here and now instead.
        """
        with self._lock:
            closed = self._closed
        if closed:
            sandbox.close()
            return
        self._room.acquire()
        try:
            self._pool.submit(self._remove, sandbox)
        except RuntimeError:  # closed meanwhile: the pool takes no more work
            self._room.release()
            sandbox.close()

    def _remove(self, sandbox: Sandbox) -> None:
        try:
            self._dispose(sandbox)
        finally:
            self._room.release()

    def _dispose(self, sandbox: Sandbox) -> None:
        """Keep ``sandbox``'s folder for reuse if a trial may take it, else remove it; never raises."""
        try:
            if self._keep and sandbox.marks is not None and self._asked_for() and self._kept(sandbox):
                return
            sandbox.close()
        except Exception as exc:  # kept for close(), which returns it to the run to report
            with self._lock:
                self._errors.append(f"could not remove the sandbox {sandbox.path}: {exc}")

    def _asked_for(self) -> bool:
        """Whether a trial may still take one more kept folder than those already held."""
        with self._lock:
            if self._wanted is None:
                return True
            return self._wanted > sum(len(shells) for shells in self._shells.values())

    def _kept(self, sandbox: Sandbox) -> bool:
        """Empty ``sandbox``'s folder and keep it for reuse; ``False`` if it must be removed instead."""
        try:
            shell = reset_shell(sandbox.path, sandbox.marks or ())
        except Exception:  # whatever went wrong, the folder is removed the usual way
            shell = None
        if shell is None:
            return False
        sandbox.release()  # the folder now lives on under its new name
        with self._lock:
            shells = self._shells.setdefault(shell.path.parent, [])
            if not self._closed and len(shells) < self._keep:
                shells.append(shell)
                return True
        remove_tree(shell.path)
        return True

    def close(self) -> list[str]:
        """Wait until every queued sandbox is removed; say which could not be, one line each.

        A folder left behind keeps its owner's name, so the next run's sweep of left-overs tries again.
        """
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True)
        with self._lock:
            shells = [shell for kept in self._shells.values() for shell in kept]
            self._shells.clear()
        for shell in shells:
            try:
                remove_tree(shell.path)
            except OSError as exc:
                self._errors.append(f"could not remove the sandbox {shell.path}: {exc}")
        with self._lock:
            errors, self._errors = self._errors, []
        return errors
