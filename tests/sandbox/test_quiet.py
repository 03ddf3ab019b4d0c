"""The look the runner takes on its event loop: it finds what a sweep would kill, and kills nothing.

``TrialScope.quiet`` must never block and never miss a live process of the
trial: a miss would let the runner check files a stray still writes, or close a scope with a process
alive. Real processes, with both Linux mechanisms (cgroup and marker sweep).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, running, wait_gone
from tests.sandbox.procs import run_in_trial as _run
from trialbook.sandbox import _pidcursor, _sweep, run_process
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

ENV = {"PATH": "/usr/bin:/bin"}
SLEEPER = "echo $$ >> {pids}; exec sleep 300 </dev/null >/dev/null 2>&1"
"""An escapee: it notes its pid, then lets go of the command's pipes (their end the command waits for)."""


def _escape(scope: TrialScope, tmp_path: Path, how: str) -> list[int]:
    pids = tmp_path / f"pids-{how.replace(' ', '-')}"
    sleeper = SLEEPER.format(pids=pids)
    start = {
        "new session": f"setsid -f sh -c '{sleeper}'",
        # No marker and a new session: only the cgroup (or nothing) holds it; with the marker sweep
        # this one is out of reach by design, so it is used with the cgroup only.
        "cleared environment": f"setsid -f env -u {TRIAL_MARKER} sh -c '{sleeper}'",
    }[how]
    _run(scope, f"{start}\nuntil [ -s {pids} ]; do sleep 0.01; done", tmp_path)
    return read_pids(pids)


def _quiet_soon(scope: TrialScope) -> bool:
    """Whether a look finds the trial quiet within a few tries.

    A look also says "not quiet" when it meets a process it cannot read yet: one of the machine's,
    between ``fork`` and ``exec``. On a busy machine that happens; the runner then sweeps in a thread.
    """
    for _ in range(50):
        if scope.quiet():
            return True
        time.sleep(0.02)
    return False


def test_a_quiet_trial_is_quiet_and_closes_with_nothing_to_kill(scope: TrialScope, tmp_path: Path) -> None:
    _run(scope, "echo ok > out.txt", tmp_path)
    assert _quiet_soon(scope)
    assert scope.close() == 0
    assert scope.killed == 0


@pytest.mark.parametrize("listing", ["pid cursor", "every process"])
def test_a_live_escapee_makes_the_look_fail_and_survives_it(
    scope: TrialScope, tmp_path: Path, listing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The look kills nothing: the sweep that follows kills and counts it, as without the look."""
    if listing == "every process":
        monkeypatch.setattr(_sweep, "span", lambda *_: None)
    (pid,) = _escape(scope, tmp_path, "new session")
    assert not scope.quiet()
    assert not scope.quiet()  # a look kills nothing: the next one finds it again
    assert running(pid)
    assert scope.killed == 0
    assert scope.sweep() == 1
    assert wait_gone([pid]) == []
    assert _quiet_soon(scope)
    assert scope.close() == 0
    assert scope.killed == 1


def test_a_member_of_the_cgroup_without_the_marker_makes_the_look_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")
    scope = supervisor().open_trial()
    try:
        assert scope.mechanism == "cgroup"
        (pid,) = _escape(scope, tmp_path, "cleared environment")
        assert not scope.quiet()
        assert running(pid)
        assert scope.close() == 1
        assert wait_gone([pid]) == []
    finally:
        scope.close()


def test_a_process_started_after_a_quiet_look_is_found_by_the_next(scope: TrialScope, tmp_path: Path) -> None:
    """A quiet look moves the starting point of the next look; a later command's escapes lie past it."""
    _run(scope, "true", tmp_path)
    assert _quiet_soon(scope)
    (pid,) = _escape(scope, tmp_path, "new session")
    assert not scope.quiet()
    assert scope.close() == 1
    assert wait_gone([pid]) == []


def test_without_proc_the_look_never_claims_quiet(scope: TrialScope, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing can be looked at without killing (no ``/proc``), the runner must sweep in a thread."""
    import trialbook.sandbox.supervisor as module

    monkeypatch.setattr(module, "has_procfs", lambda: False)
    assert not scope.quiet()


@contextlib.asynccontextmanager
async def _sleeping(scope: TrialScope, tmp_path: Path) -> AsyncIterator[int]:
    """A command of ``scope``'s (``sleep 300``) running in the body, its pid given; cancelled after it."""
    command = asyncio.ensure_future(
        run_process(["sleep", "300"], cwd=tmp_path, env=scope.env(ENV), timeout_s=60)
    )
    while not scope.leaders:
        await asyncio.sleep(0.01)
    (leader,) = scope.leaders
    try:
        yield leader
    finally:
        command.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await command


def _beside_another_trial(tmp_path: Path, then: Callable[[int], None]) -> None:
    """Call ``then`` with the pid of another open trial's command while it runs (``sleep 300``)."""
    other = supervisor().open_trial()

    async def both() -> None:
        async with _sleeping(other, tmp_path) as leader:
            await asyncio.to_thread(then, leader)
            assert running(leader)

    try:
        asyncio.run(both())
    finally:
        other.close()


def test_a_look_leaves_other_running_trials_commands_unread(
    scope: TrialScope, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another running trial's command, not waited for yet, keeps its pid and runs in a session of its own
    with its own trial's marker: a look neither reads it nor asks whether it is mid-exec, and finds its
    own trial quiet."""
    read: list[int] = []
    asked: list[int] = []
    entry = _pidcursor.entry  # type: ignore[attr-defined]
    mid_exec = _sweep.mid_exec  # type: ignore[attr-defined]

    def reading(pid: int) -> object:
        read.append(pid)
        return entry(pid)

    def asking(pid: int) -> bool:
        asked.append(pid)
        return bool(mid_exec(pid))

    def look(leader: int) -> None:
        _run(scope, "true", tmp_path)
        monkeypatch.setattr(_pidcursor, "entry", reading)
        monkeypatch.setattr(_sweep, "mid_exec", asking)
        assert _quiet_soon(scope)
        assert read  # the look went through the pid cursor: it read its own command's pid at least
        assert leader not in read
        assert leader not in asked

    _beside_another_trial(tmp_path, look)


def test_an_escapee_is_found_beside_another_trials_running_command(scope: TrialScope, tmp_path: Path) -> None:
    """Leaving the other trial's command unread never leaves one of this trial's processes unread."""

    def escape(leader: int) -> None:
        (pid,) = _escape(scope, tmp_path, "new session")
        assert not scope.quiet()
        assert scope.sweep() == 1
        assert wait_gone([pid]) == []
        assert running(leader)

    _beside_another_trial(tmp_path, escape)


def test_a_look_reads_this_trials_own_running_command_beside_another_trials(
    scope: TrialScope, tmp_path: Path
) -> None:
    """Only other trials' commands are left unread: one of this trial's own, still running, is alive."""

    def look(leader: int) -> None:
        async def mine() -> None:
            async with _sleeping(scope, tmp_path):
                assert not scope.quiet()

        asyncio.run(mine())

    _beside_another_trial(tmp_path, look)
