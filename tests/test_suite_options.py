"""The suite's own options: parallel by default, and one process with ``-p no:xdist``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.parallel import workers

ROOT = Path(__file__).resolve().parents[1]


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "tests/test_release_check.py", "-p", "no:randomly", *args],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_without_xdist_the_suite_runs_in_one_process() -> None:
    done = _pytest("-p", "no:xdist")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "workers" not in done.stdout


def test_with_xdist_it_runs_in_workers_unless_told_how_many() -> None:
    assert "created: 2/2 workers" in _pytest("-n", "2").stdout
    assert "created: 1/1 worker" in _pytest("-n", "1").stdout


def test_by_default_it_runs_one_worker_more_than_the_cores() -> None:
    n = workers()
    assert n == len(os.sched_getaffinity(0)) + 1
    assert f"created: {n}/{n} workers" in _pytest().stdout
