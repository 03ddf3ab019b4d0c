"""A trial's end on the event loop while it is cheap, in worker threads once an agent's left-overs are not.

Trials without a template write their transcripts and hand their folder over on the event loop (see
``trialbook._inplace``). An agent that leaves thousands of files makes each removal cost milliseconds of
the loop: after a few such trials the run must move that work to threads, and lose nothing on the way.
"""

from __future__ import annotations

import functools
import json
import os
import shlex
import sys
import threading
from pathlib import Path

import pytest

from tests.runner.local import write_script_eval
from trialbook._inplace import STRIKES, InPlace
from trialbook.runner import RunOptions, _engine, run
from trialbook.sandbox._remover import SandboxRemover

# Thousands of names in the workdir: removing them is tens of milliseconds of system calls. Hard links to
# one file, which are quick to make: every new inode on this kind of disk can cost the agent far more.
MAKE_LINKS = "import os; [os.link('litter/f', f'litter/l{n}') for n in range(3000)]"
LITTER = (
    f"mkdir litter && touch litter/f && {shlex.quote(sys.executable)} -c {shlex.quote(MAKE_LINKS)} "
    "&& echo ok > out.txt"
)

CHECK = "  - file_contains: {path: out.txt, pattern: ok}\n"


def _run(
    tmp_path: Path, scratch: Path, script: str, trials: int, monkeypatch: pytest.MonkeyPatch
) -> list[str]:
    """Run the eval; the name of the thread that disposed of each trial's folder, in order."""
    disposed: list[str] = []
    original = SandboxRemover._dispose

    def dispose(self: SandboxRemover, sandbox: object) -> None:
        disposed.append(threading.current_thread().name)
        original(self, sandbox)  # type: ignore[arg-type]

    monkeypatch.setattr(SandboxRemover, "_dispose", dispose)
    report = run(
        RunOptions(
            paths=(
                write_script_eval(
                    tmp_path / "evals" / "litter.eval.yaml", script, trials=trials, checks=CHECK
                ),
            ),
            concurrency=2,
            unsafe_local=True,
            results_dir=tmp_path / "results",
            environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    )
    outcomes = [outcome for result in report.results for outcome in result.outcomes]
    assert len(outcomes) == trials
    assert all(outcome.passed for outcome in outcomes), [o.explanation for o in outcomes]
    assert list(scratch.iterdir()) == [], "a sandbox outlived the run"
    for trial in range(1, trials + 1):
        folder = next((tmp_path / "results").glob(f"**/trial-{trial}"))
        assert json.loads((folder / "result.json").read_text())["result"]["success"] is True
        assert (folder / "changes.json").is_file()
    return disposed


def test_heavy_left_overs_move_the_end_of_trials_to_threads(
    tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = threading.current_thread().name  # the run's event loop runs on the caller's thread
    disposed = _run(tmp_path, scratch, LITTER, STRIKES + 2, monkeypatch)
    on_loop = [name == here for name in disposed]
    # In place first (the negative control, which leaves nothing, may come among them), then threads only.
    assert sum(on_loop) >= STRIKES, disposed
    assert on_loop == sorted(on_loop, reverse=True), f"back on the loop after moving to threads: {disposed}"
    assert on_loop[-1] is False, f"every removal stayed on the loop: {disposed}"
    threads = [name for name, loop in zip(disposed, on_loop, strict=True) if not loop]
    assert all(name.startswith("trialbook-remove") for name in threads), disposed


def test_light_trials_end_on_the_loop(tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Never struck out, whatever this machine's load does to a piece now and then: this checks the route.
    monkeypatch.setattr(_engine, "InPlace", functools.partial(InPlace, strikes=1_000))
    here = threading.current_thread().name
    disposed = _run(tmp_path, scratch, "echo ok > out.txt", 8, monkeypatch)
    assert disposed and all(name == here for name in disposed), disposed
