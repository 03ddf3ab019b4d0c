"""``trialbook.run`` works from any caller: twice in one process, and from inside a running event loop.

A run sets its own thread pool as its loop's default executor (trials hold threads for a while). That must
stay inside the run: after it, no trialbook thread is left, and a caller's own loop (a notebook, an async
test, an async application) keeps its own default executor and can still use it.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from trialbook.runner import RunReport

from .local import run_as_ci


def _run(folder: Path, concurrency: int) -> RunReport:
    evals = folder / "evals"
    evals.mkdir(parents=True, exist_ok=True)
    (evals / "hi.eval.yaml").write_text(
        "prompt_text: hi\nagents: [{name: s, script: 'echo hi > out.txt'}]\ntrials: 3\n"
        "negative_control: false\nassert:\n  - file_contains: {path: out.txt, pattern: hi}\n"
    )
    return run_as_ci(evals, folder / "runs", concurrency)


def _verdicts(report: RunReport) -> list[str]:
    return [result.verdict for result in report.results]


def _trialbook_threads(before: set[threading.Thread]) -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread not in before and thread.is_alive()]


def test_two_runs_in_one_process_leave_no_thread(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    assert _verdicts(_run(tmp_path / "one", 4)) == ["pass"]
    assert _verdicts(_run(tmp_path / "two", 8)) == ["pass"]
    assert _trialbook_threads(before) == []


def test_a_run_inside_a_running_loop_leaves_that_loop_its_own_executor(tmp_path: Path) -> None:
    before = set(threading.enumerate())

    async def caller() -> tuple[list[str], str]:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="callers-own") as own:
            loop.set_default_executor(own)
            verdicts = _verdicts(_run(tmp_path, 4))
            worker = await loop.run_in_executor(None, lambda: threading.current_thread().name)
            return verdicts, worker

    verdicts, worker = asyncio.run(caller())
    assert verdicts == ["pass"]
    assert worker.startswith("callers-own")
    assert _trialbook_threads(before) == []


@pytest.mark.asyncio
async def test_a_run_from_an_async_test_returns_its_report(tmp_path: Path) -> None:
    assert _verdicts(_run(tmp_path, 2)) == ["pass"]
