"""Attacking the swap of a finished run into place: ``kill -9`` at every rename and removal of it.

A child process stages a run beside a results folder that holds the previous run and files of the
user's, and kills itself with SIGKILL at the N-th rename (or removal) of its commit. Whatever N, once the
next run's sweep has looked (here :func:`sweep_partials`, as ``stage`` and ``trialbook clean`` call it):
the results folder holds one whole run, the new one whenever it was complete before the kill; every file
of the user's is there, once, as it was; and nothing is left beside it. Also: a sweep never touches what
merely looks like trialbook's, nor what a live run is doing, and pruning kept runs never removes the run
``latest`` names or one another live run is finishing.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from trialbook.evidence import LATEST
from trialbook.runner._folder import MARKER, leftover_name, stage, sweep_partials
from trialbook.runner._runs import prune_runs, set_latest

from .conftest import Invoke, invoke, write

__all__ = ["invoke"]

PREVIOUS, NEW = "20260101T000000Z-aaaaaa", "20260102T000000Z-bbbbbb"
USER = {"NOTES1.txt": "one\n", "NOTES2.txt": "two\n", "mine/deep.txt": "three\n"}

CHILD = textwrap.dedent(
    """
    import json, os, signal, sys
    from pathlib import Path
    from trialbook.runner._folder import stage

    final, run_id, kill_at, what = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
    staged = stage(final, run_id)
    for name, text in {"suite.json": run_id, "manifest.json": json.dumps({"run_id": run_id})}.items():
        (staged.staging / name).write_text(text)
    (staged.staging / "evals" / "e").mkdir(parents=True)
    (staged.staging / "evals" / "e" / "result.json").write_text(run_id)
    calls = 0

    def dying(real):
        def call(*args, **kwargs):
            global calls
            calls += 1
            if calls == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        return call

    if what == "rename":
        os.rename = dying(os.rename)
    else:
        os.unlink, os.rmdir = dying(os.unlink), dying(os.rmdir)
    staged.commit()
    """
)


def _commit(final: Path, run_id: str, kill_at: int = 0, what: str = "rename") -> int:
    done = subprocess.run([sys.executable, "-c", CHILD, str(final), run_id, str(kill_at), what], check=False)
    return done.returncode


def _run_at(final: Path) -> str:
    """The run at ``final``, checked whole: its three files name the same run."""
    names = {
        (final / "suite.json").read_text(),
        json.loads((final / "manifest.json").read_text())["run_id"],
        (final / "evals/e/result.json").read_text(),
    }
    assert len(names) == 1, f"a mixed run at {final}: {names}"
    assert (final / MARKER).is_file()
    return str(names.pop())


def _user_files(final: Path) -> dict[str, str]:
    return {name: (final / name).read_text() for name in USER if (final / name).is_file()}


@pytest.fixture
def previous(tmp_path: Path) -> Path:
    final = tmp_path / "results"
    assert _commit(final, PREVIOUS) == 0
    for name, text in USER.items():
        (final / name).parent.mkdir(parents=True, exist_ok=True)
        (final / name).write_text(text)
    return final


@pytest.mark.parametrize(
    ("what", "kill_at"), [("rename", n) for n in range(1, 9)] + [("unlink", n) for n in (1, 2, 3, 5)]
)
def test_a_kill_anywhere_in_the_swap_loses_nothing(previous: Path, what: str, kill_at: int) -> None:
    code = _commit(previous, NEW, kill_at, what)
    killed = code == -signal.SIGKILL
    assert code in (0, -signal.SIGKILL)
    sweep_partials(previous.parent, previous)  # what the next run does first
    # The new run was complete (renamed .ready) unless the kill came at that very rename.
    expected = PREVIOUS if (what == "rename" and kill_at == 1 and killed) else NEW
    assert _run_at(previous) == expected
    assert _user_files(previous) == USER
    assert sorted(p.name for p in previous.parent.iterdir()) == ["results"], "leftovers beside the results"
    # And the run after that swaps in cleanly on top.
    assert _commit(previous, "20260103T000000Z-cccccc") == 0
    assert _run_at(previous) == "20260103T000000Z-cccccc"
    assert _user_files(previous) == USER
    assert sorted(p.name for p in previous.parent.iterdir()) == ["results"]


def test_a_user_file_whose_name_the_new_run_writes_is_kept_beside_it(previous: Path) -> None:
    # ``controls`` is not in the previous run's list of what it wrote: this one is the user's.
    (previous / "controls").write_text("my notes on the controls\n")
    stage_final = stage(previous, NEW)
    (stage_final.staging / "controls").mkdir()
    (stage_final.staging / "manifest.json").write_text(json.dumps({"run_id": NEW}))
    stage_final.commit()
    assert (previous / "controls").is_dir()
    assert (previous / "controls.previous").read_text() == "my notes on the controls\n"
    assert _user_files(previous) == USER


def test_a_sweep_leaves_what_only_looks_like_a_leftover_and_what_a_live_run_owns(
    previous: Path, tmp_path: Path
) -> None:
    marked = (previous / MARKER).read_text()
    backups = [tmp_path / ".results.old", tmp_path / ".mybackup.old", tmp_path / ".results.partial"]
    for backup in backups:
        backup.mkdir()
        (backup / MARKER).write_text(marked)  # a copy of a results folder, marker and all
    live = leftover_name(previous, NEW, "old")  # this process's own name: a live run's
    live.mkdir()
    (live / "NOTES9.txt").write_text("mid-swap\n")
    sweep_partials(tmp_path, previous)
    assert all(backup.is_dir() for backup in backups)
    assert (live / "NOTES9.txt").read_text() == "mid-swap\n"
    assert _run_at(previous) == PREVIOUS


def test_a_very_long_results_folder_name_is_staged_swapped_and_swept(tmp_path: Path) -> None:
    final = tmp_path / ("r" * 240)
    assert _commit(final, PREVIOUS) == 0
    assert _commit(final, NEW, kill_at=3) == -signal.SIGKILL  # between the two renames of the swap
    assert not final.exists()
    sweep_partials(tmp_path, final)
    assert _run_at(final) == NEW
    assert sorted(p.name for p in tmp_path.iterdir()) == [final.name]


def _kept_run(root: Path, run_id: str, pid: int) -> Path:
    folder = root / run_id
    folder.mkdir(parents=True)
    (folder / MARKER).write_text(json.dumps({"trialbook": "run", "pid": pid, "wrote": []}))
    return folder


def test_pruning_never_removes_the_latest_run_nor_one_a_live_run_is_finishing(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        finishing = _kept_run(root, "20260101T000000Z-aaaaaa", sleeper.pid)  # another run, still alive
        named = _kept_run(root, "20260102T000000Z-bbbbbb", 2**22 + 12345)  # its process long gone
        old = _kept_run(root, "20260103T000000Z-cccccc", 2**22 + 12346)
        current = _kept_run(root, "20260104T000000Z-dddddd", os.getpid())
        set_latest(root, named)
        removed = prune_runs(root, 1, current)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert removed == [old]
    assert finishing.is_dir() and named.is_dir() and current.is_dir() and not old.exists()
    assert sorted(p.name for p in root.iterdir()) == sorted(
        [finishing.name, named.name, current.name, LATEST]
    ), "a half-removed run left behind"


def test_a_kill_while_pruning_leaves_nothing_the_next_sweep_keeps(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    old = _kept_run(root, "20260101T000000Z-aaaaaa", 2**22 + 12345)
    for index in range(50):
        (old / f"f{index}").write_text("x")
    script = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from trialbook.runner._runs import prune_runs
        calls = 0
        real = os.unlink
        def dying(*args, **kwargs):
            global calls
            calls += 1
            if calls == 10:
                os.kill(os.getpid(), signal.SIGKILL)
            return real(*args, **kwargs)
        os.unlink = dying
        root = Path({str(root)!r})
        prune_runs(root, 1, root / "20260102T000000Z-bbbbbb")
        """
    )
    assert subprocess.run([sys.executable, "-c", script], check=False).returncode == -signal.SIGKILL
    assert not old.exists()  # renamed .gone before anything in it was removed
    sweep_partials(root)
    assert list(root.iterdir()) == []


def test_a_latest_that_is_a_folder_stops_the_run_before_any_trial(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    assert invoke("eval").exit_code == 0
    runs = tmp_path / ".trialbook/runs"
    (runs / LATEST).unlink()
    (runs / LATEST).mkdir()
    before = sorted(p.name for p in runs.iterdir())
    for dry in ([], ["--dry-run"]):
        result = invoke("eval", "--force", *dry)
        assert result.exit_code == 2, result.output
        assert "latest is a folder; trialbook keeps a link there naming the latest run" in result.output
    assert sorted(p.name for p in runs.iterdir()) == before  # no trial ran


def test_clean_finishes_a_swap_a_killed_run_left(previous: Path, invoke: Invoke, tmp_path: Path) -> None:
    assert _commit(previous, NEW, kill_at=3) == -signal.SIGKILL
    assert not previous.exists()
    result = invoke("clean", "--results-dir", "results")
    assert result.exit_code == 0, result.output
    assert f"put the complete run .results.{NEW}." in result.output
    assert _run_at(previous) == NEW
    assert _user_files(previous) == USER
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".results")) == []
