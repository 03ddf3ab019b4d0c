"""Telling that the CLI process ended while another thread waits for it, and how it ended."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
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


class _ReapingThread(threading.Thread):
    """Does what ``Popen.poll()`` does on the SDK's reader thread: reap under the wait lock, then record.

    It records the status only once somebody waits for it, so a watcher that reads ``returncode`` right
    after finding the process reaped sees the window every time.
    """

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        super().__init__(daemon=True)
        self.process = process
        self.reaped = threading.Event()
        self.waited = threading.Event()

    def run(self) -> None:
        with self.process._waitpid_lock:  # type: ignore[attr-defined]
            _, status = os.waitpid(self.process.pid, 0)
            self.reaped.set()
            self.waited.wait()
            self.process.returncode = os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("watched", ["before the exit", "after the reaping"])
def test_a_process_reaped_by_another_thread_still_reports_how_it_ended(
    watched: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    process = subprocess.Popen(["sleep", "60"])
    reaper = _ReapingThread(process)
    wait = process.wait

    def noted_wait(timeout: float | None = None) -> int:
        reaper.waited.set()
        return wait(timeout)

    monkeypatch.setattr(process, "wait", noted_wait)

    async def status() -> int | None:
        future = watch_exit(process) if watched == "before the exit" else None
        process.kill()
        reaper.start()
        # Blocks the loop, so the exit is handled only once the process is reaped and not yet recorded.
        reaper.reaped.wait()
        return await (future if future is not None else watch_exit(process))

    try:
        code = asyncio.run(status())
    finally:
        reaper.waited.set()
        reaper.join()
    assert describe_exit(code) == "killed by SIGKILL"
