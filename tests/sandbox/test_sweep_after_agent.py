"""The sweep after the agent: it finds every live process of the trial, and only the trial's.

A miss would let the runner check files a stray still writes; a wrong kill would end another running
trial's command. Real processes, with both Linux mechanisms (cgroup and marker sweep).
"""

from __future__ import annotations

import asyncio
import contextlib
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


def test_a_trial_with_nothing_left_is_swept_with_nothing_to_kill(scope: TrialScope, tmp_path: Path) -> None:
    _run(scope, "echo ok > out.txt", tmp_path)
    assert scope.sweep() == 0
    assert scope.close() == 0
    assert scope.killed == 0


@pytest.mark.parametrize("listing", ["pid cursor", "every process"])
def test_a_live_escapee_is_killed_and_counted_by_the_sweep(
    scope: TrialScope, tmp_path: Path, listing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read through the pid cursor, or through every process where the cursor cannot be trusted."""
    if listing == "every process":
        monkeypatch.setattr(_sweep, "span", lambda *_: None)
    (pid,) = _escape(scope, tmp_path, "new session")
    assert running(pid)
    assert scope.sweep() == 1
    assert wait_gone([pid]) == []
    assert scope.sweep() == 0
    assert scope.close() == 0
    assert scope.killed == 1


def test_a_member_of_the_cgroup_without_the_marker_is_killed_at_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on")
    scope = supervisor().open_trial()
    try:
        assert scope.mechanism == "cgroup"
        (pid,) = _escape(scope, tmp_path, "cleared environment")
        assert running(pid)
        assert scope.close() == 1
        assert wait_gone([pid]) == []
    finally:
        scope.close()


def test_a_process_started_after_a_sweep_is_found_by_the_next(scope: TrialScope, tmp_path: Path) -> None:
    """A sweep moves the starting point of the next one; a later command's escapes lie past it."""
    _run(scope, "true", tmp_path)
    assert scope.sweep() == 0
    (pid,) = _escape(scope, tmp_path, "new session")
    assert scope.close() == 1
    assert wait_gone([pid]) == []


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


def test_a_sweep_leaves_other_running_trials_commands_unread(
    scope: TrialScope, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another running trial's command, not waited for yet, keeps its pid and runs in a session of its own
    with its own trial's marker: a sweep neither reads it nor asks whether it is mid-exec, and kills
    nothing of its own trial that is gone."""
    read: list[int] = []
    asked: list[int] = []
    entry = _pidcursor.entry  # type: ignore[attr-defined]
    mid_exec = _sweep.mid_exec  # type: ignore[attr-defined]

    def reading(pid: int) -> object:
        read.append(pid)
        return entry(pid)

    def asking(pid: int, environ: bytes | None = None) -> bool:
        asked.append(pid)
        return bool(mid_exec(pid, environ))

    def look(leader: int) -> None:
        _run(scope, "true", tmp_path)
        monkeypatch.setattr(_pidcursor, "entry", reading)
        monkeypatch.setattr(_sweep, "mid_exec", asking)
        assert scope.sweep() == 0
        assert read  # the sweep went through the pid cursor: it read its own command's pid at least
        assert leader not in read
        assert leader not in asked

    _beside_another_trial(tmp_path, look)


def test_an_escapee_is_found_beside_another_trials_running_command(scope: TrialScope, tmp_path: Path) -> None:
    """Leaving the other trial's command unread never leaves one of this trial's processes unread."""

    def escape(leader: int) -> None:
        (pid,) = _escape(scope, tmp_path, "new session")
        assert scope.sweep() == 1
        assert wait_gone([pid]) == []
        assert running(leader)

    _beside_another_trial(tmp_path, escape)
