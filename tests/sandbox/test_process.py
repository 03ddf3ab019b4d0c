import asyncio
import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, running, wait_gone
from trialbook.sandbox import run_process

ENV = {"PATH": "/usr/bin:/bin"}

# A child and a grandchild in the background, each writing its pid, then the leader waits forever.
SPAWN_TREE = """
sleep 1000 & echo $! >> pids
( sleep 1000 & echo $! >> pids; wait ) &
echo $! >> pids
echo started
wait
"""


@pytest.mark.asyncio
async def test_timeout_kills_children_and_grandchildren(tmp_path: Path) -> None:
    outcome = await run_process(["bash", "-c", SPAWN_TREE], cwd=tmp_path, env=ENV, timeout_s=1)
    assert outcome.timed_out
    assert outcome.returncode is None
    assert outcome.stdout == b"started\n"  # output before the kill is kept
    pids = read_pids(tmp_path / "pids")
    assert len(pids) == 3
    assert wait_gone(pids) == []


@pytest.mark.asyncio
async def test_background_children_do_not_outlive_a_leader_that_exits(tmp_path: Path) -> None:
    outcome = await run_process(
        ["bash", "-c", "sleep 1000 & echo $! > pids; echo done"], cwd=tmp_path, env=ENV, timeout_s=30
    )
    assert outcome.returncode == 0
    assert not outcome.timed_out
    assert wait_gone(read_pids(tmp_path / "pids")) == []


@pytest.mark.asyncio
async def test_cancellation_kills_the_group(tmp_path: Path) -> None:
    task = asyncio.create_task(run_process(["bash", "-c", SPAWN_TREE], cwd=tmp_path, env=ENV))
    pids_file = tmp_path / "pids"
    while not (pids_file.exists() and len(read_pids(pids_file)) == 3):
        await asyncio.sleep(0.02)
    assert all(running(pid) for pid in read_pids(pids_file))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_gone(read_pids(pids_file)) == []


@pytest.mark.asyncio
async def test_merge_stderr_keeps_both_streams_in_order(tmp_path: Path) -> None:
    outcome = await run_process(
        ["bash", "-c", "echo out1; echo err1 >&2; echo out2"], cwd=tmp_path, env=ENV, merge_stderr=True
    )
    assert outcome.stdout == b"out1\nerr1\nout2\n"
    assert outcome.stderr == b""


@pytest.mark.asyncio
async def test_stdin_is_fed_and_closed(tmp_path: Path) -> None:
    outcome = await run_process(["cat"], cwd=tmp_path, env=ENV, stdin=b"hello\n", timeout_s=30)
    assert outcome.stdout == b"hello\n"
    assert outcome.returncode == 0


@pytest.mark.asyncio
async def test_a_process_that_left_the_group_cannot_hold_the_pipes_open(tmp_path: Path) -> None:
    # setsid puts the sleeper in its own session, out of reach of the group kill; it still holds stdout.
    script = (
        "setsid bash -c 'echo $$ > pids.tmp; mv pids.tmp pids; exec sleep 1000' &\n"
        "while [ ! -s pids ]; do sleep 0.01; done; echo leader-done"
    )
    try:
        outcome = await run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=60)
        assert not outcome.timed_out
        assert outcome.returncode == 0
        assert outcome.stdout == b"leader-done\n"
        # It really escaped the group kill, so the return above did not depend on it dying.
        assert all(running(pid) for pid in read_pids(tmp_path / "pids"))
    finally:
        for pid in read_pids(tmp_path / "pids"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.asyncio
async def test_a_line_longer_than_the_stream_limit_is_captured_whole(tmp_path: Path) -> None:
    lines: list[bytes] = []
    outcome = await run_process(
        ["bash", "-c", "head -c 300000 /dev/zero | tr '\\0' x; echo; echo tail"],
        cwd=tmp_path,
        env=ENV,
        timeout_s=30,
        on_stdout_line=lines.append,
    )
    assert outcome.returncode == 0
    assert lines == [b"x" * 300000 + b"\n", b"tail\n"]
    # The caller keeps what it parses line by line; the bytes are not held a second time.
    assert outcome.stdout == b""
    whole = await run_process(
        ["bash", "-c", "head -c 300000 /dev/zero | tr '\\0' x; echo; echo tail"],
        cwd=tmp_path,
        env=ENV,
        timeout_s=30,
    )
    assert whole.stdout == b"x" * 300000 + b"\ntail\n"


@pytest.mark.asyncio
async def test_cancellation_while_the_process_is_still_being_connected_kills_the_group(
    tmp_path: Path,
) -> None:
    # The process is forked and running, but the event loop has not yet connected its pipes (it is
    # held up, as on a loaded machine): asyncio's own cancellation path kills only the leader and on
    # Python 3.11 then waits for pipes the background children hold open, forever.
    task = asyncio.create_task(run_process(["bash", "-c", SPAWN_TREE], cwd=tmp_path, env=ENV))
    pids_file = tmp_path / "pids"
    try:
        for _ in range(2):  # run_process starts, then the fork happens; the pipes are not connected yet
            await asyncio.sleep(0)
        for _ in range(3000):  # blocking on purpose: the loop must not run meanwhile
            if pids_file.exists() and len(read_pids(pids_file)) == 3:
                break
            time.sleep(0.01)
        pids = read_pids(pids_file)
        assert len(pids) == 3 and all(running(pid) for pid in pids)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), 30)
        assert wait_gone(pids) == []
    finally:
        # Never leave sleepers behind (nor a task stuck on their pipes), even when the code under test hangs.
        for pid in read_pids(pids_file) if pids_file.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(task, 30)
