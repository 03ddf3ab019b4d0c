"""On Python 3.11 a process's exit comes from its pidfd: no thread per process, any loop, others' kept."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from trialbook._blocking import run_blocking
from trialbook.sandbox import run_process

ENV = {"PATH": "/usr/bin:/bin"}

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12) or not sys.platform.startswith("linux"),
    reason="Python 3.12 picks pidfds itself; pidfds are Linux's",
)


def _waitpid_threads() -> list[str]:
    # ThreadedChildWatcher names each of its threads waitpid-<n>.
    return [thread.name for thread in threading.enumerate() if thread.name.startswith("waitpid-")]


@pytest.mark.asyncio
async def test_no_thread_waits_for_a_running_process(tmp_path: Path) -> None:
    seen: list[list[str]] = []

    async def look() -> None:
        await asyncio.sleep(0.3)
        seen.append(_waitpid_threads())

    outcome, _ = await asyncio.gather(
        run_process(["bash", "-c", "sleep 0.8; exit 7"], cwd=tmp_path, env=ENV, timeout_s=30), look()
    )
    assert outcome.returncode == 7
    assert seen == [[]]
    assert type(asyncio.get_child_watcher()).__name__ == "_PidfdWatcher"


def test_processes_on_loops_in_two_threads_both_report_their_exit(tmp_path: Path) -> None:
    async def two() -> list[int | None]:
        async def here() -> int | None:
            return (await run_process(["bash", "-c", "sleep 0.2; exit 3"], cwd=tmp_path, env=ENV)).returncode

        def there() -> int | None:  # a second loop, in a worker thread, while the first one runs
            outcome = run_blocking(run_process(["bash", "-c", "exit 5"], cwd=tmp_path, env=ENV))
            return outcome.returncode

        return list(await asyncio.gather(here(), asyncio.to_thread(there)))

    assert asyncio.run(two()) == [3, 5]


def test_a_watcher_the_application_chose_is_left_alone(tmp_path: Path) -> None:
    script = f"""
import asyncio
from pathlib import Path
from trialbook.sandbox import run_process

asyncio.set_child_watcher(asyncio.SafeChildWatcher())

async def main():
    outcome = await run_process(["bash", "-c", "exit 4"], cwd=Path({str(tmp_path)!r}), env={ENV!r})
    print(outcome.returncode, type(asyncio.get_child_watcher()).__name__)

asyncio.run(main())
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "SafeChildWatcher"]
