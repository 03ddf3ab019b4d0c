"""A process's pipes and exit are watched by the event loop itself: no thread per process, any loop,
nothing left open, and the same answers where there are no pidfds."""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, wait_gone
from trialbook._util.blocking import run_blocking
from trialbook.sandbox import run_process

ENV = {"PATH": "/usr/bin:/bin"}


def _waiting_threads() -> list[str]:
    # asyncio's ThreadedChildWatcher names its threads waitpid-<n>; the fallback here trialbook-wait-<pid>.
    return [t.name for t in threading.enumerate() if t.name.startswith(("waitpid-", "trialbook-wait-"))]


def _open_fds() -> set[str]:
    gc.collect()  # what earlier tests left for the collector closes now, not in the middle of a test
    return set(os.listdir("/proc/self/fd"))


async def _look(folder: Path, seen: list[list[str]]) -> None:
    """Once the command says it runs, note the threads waiting for processes, then let it end."""
    while not (folder / "running").exists():
        await asyncio.sleep(0.01)
    seen.append(_waiting_threads())
    (folder / "looked").touch()


@pytest.mark.asyncio
async def test_no_thread_waits_for_a_running_process(tmp_path: Path) -> None:
    seen: list[list[str]] = []
    script = "touch running; until [ -e looked ]; do sleep 0.01; done; exit 7"
    outcome, _ = await asyncio.gather(
        run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30), _look(tmp_path, seen)
    )
    assert outcome.returncode == 7
    assert seen == [[]]


def test_processes_on_loops_in_two_threads_both_report_their_exit(tmp_path: Path) -> None:
    async def two() -> list[int | None]:
        async def here() -> int | None:
            return (await run_process(["bash", "-c", "sleep 0.2; exit 3"], cwd=tmp_path, env=ENV)).returncode

        def there() -> int | None:  # a second loop, in a worker thread, while the first one runs
            outcome = run_blocking(run_process(["bash", "-c", "exit 5"], cwd=tmp_path, env=ENV))
            return outcome.returncode

        return list(await asyncio.gather(here(), asyncio.to_thread(there)))

    assert asyncio.run(two()) == [3, 5]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="child watchers are deprecated from Python 3.12")
def test_a_watcher_the_application_chose_is_left_alone(tmp_path: Path) -> None:
    script = f"""
import asyncio
from pathlib import Path
from trialbook.sandbox import run_process

asyncio.set_child_watcher(asyncio.SafeChildWatcher())

async def main():
    outcome = await run_process(["bash", "-c", "exit 4"], cwd=Path({str(tmp_path)!r}), env={ENV!r})
    mine = await asyncio.create_subprocess_exec("bash", "-c", "exit 6")
    print(outcome.returncode, await mine.wait(), type(asyncio.get_child_watcher()).__name__)

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "6", "SafeChildWatcher"]


@pytest.mark.asyncio
async def test_without_pidfds_a_thread_waits_and_the_answers_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "pidfd_open", refused)
    seen: list[list[str]] = []
    script = "sleep 1000 & echo $! > pids; touch running; until [ -e looked ]; do sleep 0.01; done; "
    script += "echo done; exit 9"
    outcome, _ = await asyncio.gather(
        run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30), _look(tmp_path, seen)
    )
    assert (outcome.returncode, outcome.stdout, outcome.timed_out) == (9, b"done\n", False)
    assert len(seen[0]) == 1 and seen[0][0].startswith("trialbook-wait-")
    assert wait_gone(read_pids(tmp_path / "pids")) == []  # the leader's group went with it
    timed = await run_process(["bash", "-c", "sleep 1000"], cwd=tmp_path, env=ENV, timeout_s=0.3)
    assert timed.timed_out and timed.returncode is None


@pytest.mark.asyncio
async def test_standard_input_larger_than_a_pipe_goes_through_while_the_loop_runs(tmp_path: Path) -> None:
    data = os.urandom(4 << 20)
    ticks = 0
    done = asyncio.Event()

    async def tick() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.001)

    ticker = asyncio.create_task(tick())
    try:
        outcome = await run_process(["cat"], cwd=tmp_path, env=ENV, stdin=data, timeout_s=60)
    finally:
        done.set()
        await ticker
    assert outcome.returncode == 0
    assert outcome.stdout == data
    assert ticks > 1  # the loop was never blocked on a full pipe


@pytest.mark.asyncio
async def test_a_process_that_does_not_read_its_input_ends_as_it_would(tmp_path: Path) -> None:
    data = b"x" * (4 << 20)
    ignored = await run_process(["bash", "-c", "exit 3"], cwd=tmp_path, env=ENV, stdin=data, timeout_s=30)
    assert (ignored.returncode, ignored.timed_out) == (3, False)
    some = await run_process(["head", "-c", "5"], cwd=tmp_path, env=ENV, stdin=data, timeout_s=30)
    assert (some.returncode, some.stdout) == (0, b"xxxxx")


@pytest.mark.asyncio
async def test_a_reader_that_raises_is_reported_and_the_process_still_ends(tmp_path: Path) -> None:
    before = _open_fds()

    def bad(line: bytes) -> None:
        raise ValueError(f"cannot parse {line!r}")

    script = "echo first; head -c 1000000 /dev/zero; echo $$ > pid; exit 0"
    with pytest.raises(ValueError, match="cannot parse b'first"):
        await run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30, on_stdout_line=bad)
    # It was not held up writing into a pipe nobody read: it got to its end, well before the deadline.
    assert (tmp_path / "pid").exists()
    assert _open_fds() <= before


@pytest.mark.asyncio
async def test_nothing_is_left_open_however_a_process_ends(tmp_path: Path) -> None:
    before = _open_fds()
    for _ in range(5):
        await run_process(["bash", "-c", "echo out; echo err >&2"], cwd=tmp_path, env=ENV, stdin=b"in")
        await run_process(["bash", "-c", "echo both >&2"], cwd=tmp_path, env=ENV, merge_stderr=True)
        await run_process(["bash", "-c", "sleep 1000"], cwd=tmp_path, env=ENV, timeout_s=0.05)
        with pytest.raises(FileNotFoundError):
            await run_process(["no-such-program-here"], cwd=tmp_path, env=ENV)
        task = asyncio.ensure_future(run_process(["sleep", "1000"], cwd=tmp_path, env=ENV, stdin=b"x"))
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()  # a Popen whose exit it never learned warns here ("subprocess ... is still running")
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert _open_fds() <= before
