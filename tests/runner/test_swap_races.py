"""Attacking the swap where two processes meet it: sweeps and commits at once, names that share a head.

Runs and sweeps of one folder take turns (``folder_lock``); a leftover whose name was shortened is
matched by the results folder its marker names; a run completed before the one in place never replaces
it; and leftovers of earlier trialbook versions hand the user's files back instead of removing them.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from trialbook.runner._folder import MARKER, stage, sweep_partials

from .conftest import Invoke, invoke, write
from .test_swap_kills import NEW, PREVIOUS, USER, _commit, _run_at, _user_files, previous

__all__ = ["invoke", "previous"]

PAIR = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from trialbook.runner._folder import stage, sweep_partials

    final, run_id, go, what = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    staged = stage(final, run_id) if what == "commit" else None
    if staged is not None:
        for name, text in {"suite.json": run_id, "manifest.json": json.dumps({"run_id": run_id})}.items():
            (staged.staging / name).write_text(text)
        (staged.staging / "evals" / "e").mkdir(parents=True)
        (staged.staging / "evals" / "e" / "result.json").write_text(run_id)
    Path(f"{go}.{sys.argv[5]}").touch()  # staged, waiting
    while not go.exists():
        time.sleep(0.001)
    if staged is not None:
        staged.commit()
    else:
        sweep_partials(final.parent, final)
    """
)


def _together(final: Path, jobs: list[tuple[str, str]], go: Path) -> list[int]:
    """Start one child per (run id, commit|sweep), release them at once, and wait for all."""
    go.unlink(missing_ok=True)
    children = []
    for index, (run_id, what) in enumerate(jobs):
        argv = [sys.executable, "-c", PAIR, str(final), run_id, str(go), what, str(index)]
        children.append(subprocess.Popen(argv))
    waiting = [Path(f"{go}.{index}") for index in range(len(jobs))]
    deadline = time.monotonic() + 60
    while not all(path.exists() for path in waiting):
        assert time.monotonic() < deadline, "the children never got ready"
        time.sleep(0.005)
    for path in waiting:
        path.unlink()
    go.touch()
    return [child.wait(timeout=60) for child in children]


def test_two_sweeps_finishing_one_killed_run_at_once_keep_the_complete_run(
    previous: Path, tmp_path: Path
) -> None:
    final = previous
    for round_ in range(6):
        run_id = f"2026010{round_ + 2}T000000Z-bbbbbb"
        # Killed at its second rename: complete (.ready), the previous run still in place.
        assert _commit(final, run_id, kill_at=2) == -signal.SIGKILL
        assert _together(final, [("x", "sweep"), ("x", "sweep")], tmp_path / "go") == [0, 0]
        assert _run_at(final) == run_id
        assert _user_files(final) == USER
        assert sorted(p.name for p in tmp_path.iterdir()) == ["go", "results"]


def test_two_runs_committing_into_one_folder_at_once_both_succeed_and_lose_nothing(
    previous: Path, tmp_path: Path
) -> None:
    final = previous
    for round_ in range(20):
        ids = [f"202601{round_ + 2:02d}T000000Z-aaaaa{n}" for n in (1, 2)]
        assert _together(final, [(ids[0], "commit"), (ids[1], "commit")], tmp_path / "go") == [0, 0]
        assert _run_at(final) in ids
        assert _user_files(final) == USER
        assert sorted(p.name for p in tmp_path.iterdir()) == ["go", "results"]


def test_a_shortened_name_two_folders_share_finishes_only_into_its_own(tmp_path: Path) -> None:
    x, y = tmp_path / ("r" * 200 + "-X"), tmp_path / ("r" * 200 + "-Y")
    assert _commit(x, PREVIOUS) == 0
    assert _commit(y, PREVIOUS) == 0
    (y / "MY_Y_NOTES.txt").write_text("y\n")
    assert _commit(y, NEW, kill_at=3) == -signal.SIGKILL  # between the two renames of y's swap
    sweep_partials(tmp_path, x)  # what a run into x does first
    assert _run_at(x) == PREVIOUS
    assert not (x / "MY_Y_NOTES.txt").exists()
    assert _run_at(y) == NEW
    assert (y / "MY_Y_NOTES.txt").read_text() == "y\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([x.name, y.name])


def test_a_run_completed_before_the_one_in_place_never_replaces_it(previous: Path, tmp_path: Path) -> None:
    final = previous
    earlier = stage(final, "20260101T120000Z-aaaaaa")  # started first, finishes last
    (earlier.staging / "suite.json").write_text("20260101T120000Z-aaaaaa")
    (earlier.staging / "manifest.json").write_text(json.dumps({"run_id": "20260101T120000Z-aaaaaa"}))
    (earlier.staging / "evals/e").mkdir(parents=True)
    (earlier.staging / "evals/e/result.json").write_text("20260101T120000Z-aaaaaa")
    assert _commit(final, NEW, kill_at=2) == -signal.SIGKILL  # started later, complete, then killed
    earlier.commit()
    sweep_partials(tmp_path, final)
    assert _run_at(final) == "20260101T120000Z-aaaaaa"
    assert _user_files(final) == USER
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def _legacy_partial(final: Path, run_id: str) -> Path:
    """What an earlier version left when killed mid-swap: a complete staging folder holding user files."""
    staging = final.with_name(f".{final.name}.{run_id}.partial")
    (staging / "evals/e").mkdir(parents=True)
    (staging / "evals/e/result.json").write_text(run_id)
    (staging / "suite.json").write_text(run_id)
    (staging / "manifest.json").write_text(json.dumps({"run_id": run_id}))
    marker = {"trialbook": "run", "pid": 2**22 + 4321, "wrote": ["evals", "manifest.json", "suite.json"]}
    (staging / MARKER).write_text(json.dumps(marker))
    (staging / "NOTES.txt").write_text("moved in by the old swap\n")
    return staging


def test_an_earlier_versions_staging_folder_hands_the_users_files_back(
    previous: Path, tmp_path: Path
) -> None:
    final = previous
    _legacy_partial(final, NEW)
    sweep_partials(tmp_path, final)
    assert _run_at(final) == PREVIOUS
    assert (final / "NOTES.txt").read_text() == "moved in by the old swap\n"
    assert _user_files(final) == USER
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]
    # Killed between its two renames: no results folder, the complete run goes in place.
    final.rename(tmp_path / f".results.{PREVIOUS}.old")
    (tmp_path / f".results.{PREVIOUS}.old" / "NOTES.txt").unlink()
    _legacy_partial(final, NEW)
    sweep_partials(tmp_path, final)
    assert _run_at(final) == NEW
    assert (final / "NOTES.txt").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_paths_that_name_nothing_usable_are_errors_not_tracebacks(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    (tmp_path / "loopA").symlink_to("loopB")
    (tmp_path / "loopB").symlink_to("loopA")
    long = "x" * 300
    cases = [
        (["eval", "--results-dir", "loopA"], "--results-dir loopA: its symbolic links go round in a loop"),
        (["eval", "--results-dir", "loopA", "--dry-run"], "--results-dir loopA: its symbolic links go round"),
        (["eval", "--results-dir", long], f"--results-dir {long}: File name too long"),
        (["eval", "--junit", "loopA/j.xml"], "--junit loopA/j.xml: its symbolic links go round in a loop"),
        (["clean", "--results-dir", "loopA"], "--results-dir loopA: its symbolic links go round in a loop"),
    ]
    for args, message in cases:
        result = invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / ".trialbook").exists()
