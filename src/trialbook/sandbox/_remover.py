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
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from ._sandbox import Sandbox

__all__ = ["SandboxRemover"]


class SandboxRemover:
    """Removes sandboxes on threads of its own, at most ``limit`` waiting."""

    def __init__(self, limit: int, workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="trialbook-remove")
        self._room = threading.BoundedSemaphore(max(1, limit))
        self._lock = threading.Lock()
        self._errors: list[str] = []
        self._closed = False

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
        """Remove ``sandbox``'s folder; never raises."""
        try:
            sandbox.close()
        except Exception as exc:  # kept for close(), which returns it to the run to report
            with self._lock:
                self._errors.append(f"could not remove the sandbox {sandbox.path}: {exc}")

    def close(self) -> list[str]:
        """Wait until every queued sandbox is removed; say which could not be, one line each.

        A folder left behind keeps its owner's name, so the next run's sweep of left-overs tries again.
        """
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=True)
        with self._lock:
            errors, self._errors = self._errors, []
        return errors
