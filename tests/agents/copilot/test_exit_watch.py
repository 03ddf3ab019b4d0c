"""Telling that the CLI process ended while another thread waits for it, and how it ended."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

import pytest

from trialbook.agents.copilot._exit import describe_exit, has_exited, watch_exit


def _wait_until_zombie(pid: int) -> None:
    stat = Path(f"/proc/{pid}/stat")
    for _ in range(3000):
        if stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return
        time.sleep(0.01)
    raise AssertionError(f"{pid} did not end")


@pytest.mark.parametrize("how", ["signal", "exit code"])
def test_an_ended_process_is_seen_while_another_thread_holds_its_wait(how: str) -> None:
    command = ["sleep", "60"] if how == "signal" else ["sh", "-c", "exit 3"]
    process = subprocess.Popen(command)
    if how == "signal":
        process.send_signal(signal.SIGKILL)
    _wait_until_zombie(process.pid)
    # The SDK's thread sits in process.wait(): while it does, poll() answers "running" without looking.
    with process._waitpid_lock:  # type: ignore[attr-defined]
        assert process.poll() is None
        assert has_exited(process)

        async def status() -> int | None:
            return await asyncio.wait_for(watch_exit(process), 30)

        code = asyncio.run(status())
    expected = -signal.SIGKILL if how == "signal" else 3
    assert code == expected
    assert describe_exit(code) == ("killed by SIGKILL" if how == "signal" else "exit code 3")
    # Read without reaping: the owner's own wait still gets the status.
    assert process.wait(timeout=30) == expected
    assert has_exited(process)


def test_a_running_process_is_not_taken_for_ended_and_watching_it_can_be_cancelled() -> None:
    process = subprocess.Popen(["sleep", "60"])
    try:
        assert not has_exited(process)

        async def watch() -> bool:
            future = watch_exit(process)
            await asyncio.sleep(0.2)
            done = future.done()
            future.cancel()
            await asyncio.sleep(0)
            return done

        assert asyncio.run(watch()) is False
    finally:
        process.kill()
        process.wait()
