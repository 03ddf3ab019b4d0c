"""The supervisor's lock is never held across a read of ``/proc`` or of a cgroup file.

Trials open on the event loop and close in worker threads, and every started or collected command takes
the same lock. A read made under it (the pid cursor when a trial opens, a group's members when it is
given back) held up every other thread, the event loop among them, for as long as the reading thread
waited for the disk or for the interpreter lock. Each test blocks such a read in one thread, on an
event only the test sets, and checks that the lock's other users get through meanwhile.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from trialbook.sandbox import _pidcursor, supervisor
from trialbook.sandbox._cgroup import CgroupRoot
from trialbook.sandbox.supervisor import TRIAL_MARKER, Supervisor, TrialScope

WAIT_S = 30.0
"""Long enough for any machine; a thread still blocked after it is held up by the lock for good."""


class Blocked:
    """A read that stops until :meth:`go`, and says when it has started."""

    def __init__(self, read: Callable[..., object]) -> None:
        self.read = read
        self.entered = threading.Event()
        self.released = threading.Event()

    def __call__(self, *args: object, **kwargs: object) -> object:
        if threading.current_thread() is not threading.main_thread():
            self.entered.set()
            self.released.wait(WAIT_S)
        return self.read(*args, **kwargs)

    def go(self) -> None:
        self.released.set()


@pytest.fixture
def owner() -> Iterator[Supervisor]:
    # A supervisor of its own and no cgroups: the shared one may hold the test run's other trials.
    own = Supervisor()
    yield own
    own._cgroups = None  # a test's stand-in folder of groups is its own to remove
    for scope in list(own._scopes.values()):
        scope.close()


def _in_thread(work: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def _lock_free_meanwhile(owner: Supervisor) -> bool:
    """Whether the lock's everyday users (a command started and collected) get through now."""
    done = threading.Event()

    def use() -> None:
        owner.started(999_999_999, {TRIAL_MARKER: "none"})
        owner.waited(999_999_999)
        done.set()

    _in_thread(use)
    return done.wait(WAIT_S)


def _lock_free_during(blocked: Blocked, work: Callable[[], object], owner: Supervisor, what: str) -> None:
    """Run ``work`` in a thread until it reaches the blocked read, and check the lock is free then."""
    thread = _in_thread(work)
    assert blocked.entered.wait(WAIT_S), f"{what} was never read"
    try:
        assert _lock_free_meanwhile(owner), f"the lock was held while {what} was read"
    finally:
        blocked.go()
        thread.join(WAIT_S)


def test_opening_a_trial_reads_the_pid_cursor_outside_the_lock(
    owner: Supervisor, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = Blocked(_pidcursor.cursor)
    monkeypatch.setattr(supervisor, "cursor", blocked)
    monkeypatch.setenv("TRIALBOOK_CGROUP", "off")
    opened: list[TrialScope] = []
    _lock_free_during(blocked, lambda: opened.append(owner.open_trial()), owner, "the pid cursor")
    assert [scope.marker in owner._scopes for scope in opened] == [True]


def test_giving_a_group_back_reads_it_outside_the_lock(
    owner: Supervisor, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A folder of groups that is plain folders: what is tested is the lock, not the kernel's groups.
    owner._cgroups = CgroupRoot(tmp_path)
    group = tmp_path / "trial-one"
    group.mkdir()
    (group / "cgroup.threads").write_text("")
    scope = TrialScope(owner, group)
    holder = TrialScope(owner, None)  # open still when the other closes: the folder of groups stays
    owner._scopes.update({scope.marker: scope, holder.marker: holder})
    blocked = Blocked(CgroupRoot.reusable)
    monkeypatch.setattr(CgroupRoot, "reusable", staticmethod(blocked))
    # ``close`` ends the scope and gives its group back; with no process of it started, nothing to kill.
    monkeypatch.setattr(CgroupRoot, "kill", staticmethod(lambda *args, **kwargs: set()))
    _lock_free_during(blocked, scope.close, owner, "the ended trial's group")
    assert list(owner._scopes) == [holder.marker]
    # Read empty, so kept for the next trial: the read before the lock still decides.
    assert owner._cgroups._free == [group]
