"""The results folder is trialbook's alone: marked, never foreign, replaced only once the new run is whole."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from trialbook.evidence import load_suite
from trialbook.runner._folder import MARKER

from .conftest import Invoke, invoke, write
from .gitrepo import checked_out_state, commit_all, git, make_repo

__all__ = ["invoke"]

PASSING = "prompt_text: hi\nagents: [literal]\n"


def test_results_dir_dot_in_a_repository_changes_nothing_and_exits_2(
    invoke: Invoke, tmp_path: Path, monkeypatch: object
) -> None:
    work, _ = make_repo(tmp_path / "repo")
    write(work / "evals/one.eval.yaml", PASSING)
    write(work / "README.md", "mine\n")
    commit_all(work, "evals")
    before = checked_out_state(work)
    os.chdir(work)
    result = invoke("eval", "evals", "--results-dir", ".")
    assert result.exit_code == 2, result.output
    assert f"--results-dir {work}" in result.output or "--results-dir ." in result.output
    assert MARKER in result.output
    assert "Traceback" not in result.output
    assert checked_out_state(work) == before
    assert not (work / ".gitignore").exists()


def test_a_foreign_folder_is_refused_before_anything_runs(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/one.eval.yaml", "prompt_text: hi\nagents: [{name: s, script: 'touch ran'}]\n")
    write(tmp_path / "out/notes.txt", "the user's\n")
    result = invoke("eval", "evals", "--results-dir", "out")
    assert result.exit_code == 2
    assert "out is not empty" in result.output
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["notes.txt"]
    assert (tmp_path / "out/notes.txt").read_text() == "the user's\n"
    dry = invoke("eval", "evals", "--results-dir", "out", "--dry-run")
    assert dry.exit_code == 2
    assert "out is not empty" in dry.output


def test_a_run_replaces_only_what_trialbook_wrote(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/old.eval.yaml", PASSING)
    assert invoke("eval", "evals", "--results-dir", "out").exit_code == 0
    out = tmp_path / "out"
    assert (out / MARKER).is_file()
    assert (out / "evals/old/literal/trial-1").is_dir()
    write(out / "notes.txt", "kept\n")
    (tmp_path / "evals/old.eval.yaml").unlink()
    write(tmp_path / "evals/new.eval.yaml", PASSING)
    assert invoke("eval", "evals", "--results-dir", "out").exit_code == 0
    assert (out / "notes.txt").read_text() == "kept\n"
    assert sorted(p.name for p in (out / "evals").iterdir()) == ["new"]
    assert [t.id for t in load_suite(out / "suite.json").tests] == ["new::literal"]
    # Nothing of the swap is left beside the folder.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evals", "out"]


def test_the_previous_results_stay_whole_while_a_run_is_writing(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", PASSING)
    assert invoke("eval", "evals", "--results-dir", "out").exit_code == 0
    first = (tmp_path / "out/suite.json").read_text()
    copy = write(tmp_path / "first.json", first)
    # The agent of the second run compares what the results folder holds while it runs with the first run.
    suite = tmp_path / "out/suite.json"
    write(
        tmp_path / "evals/e.eval.yaml",
        f"prompt_text: hi\nagents: [{{name: s, script: 'cmp {suite} {copy} && touch same'}}]\n"
        "assert:\n  - file_exists: same\n",
    )
    result = invoke("eval", "evals", "--results-dir", "out")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out/suite.json").read_text() != first


def test_legacy_results_folder_is_taken_over(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", PASSING)
    write(tmp_path / "out/.gitignore", "# written by trialbook: results are artifacts, not sources\n*\n")
    write(tmp_path / "out/suite.json", "{}\n")
    write(tmp_path / "out/evals/gone/literal/trial-1/result.json", "{}\n")
    assert invoke("eval", "evals", "--results-dir", "out").exit_code == 0
    assert sorted(p.name for p in (tmp_path / "out/evals").iterdir()) == ["e"]


def test_a_run_in_a_repository_leaves_git_status_clean(invoke: Invoke, tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path / "repo")
    write(work / "evals/one.eval.yaml", PASSING)
    commit_all(work, "evals")
    os.chdir(work)
    assert invoke("eval", "evals", "--results-dir", "results").exit_code == 0
    assert git(work, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (work / ".gitignore").exists()


def test_kill_9_mid_run_keeps_the_previous_results_and_the_next_run_sweeps(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "evals/e.eval.yaml", PASSING)
    assert invoke("eval", "evals", "--results-dir", "out").exit_code == 0
    first = (tmp_path / "out/suite.json").read_text()
    write(tmp_path / "evals/slow.eval.yaml", "prompt_text: hi\nagents: [{name: s, script: 'sleep 60'}]\n")
    env = {**os.environ, "CI": "true"}
    child = subprocess.Popen(
        [str(Path(sys.executable).parent / "trialbook"), "eval", "evals", "--results-dir", "out"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".out.*.partial/evals/slow/s/trial-1")):
            assert time.monotonic() < deadline, "the run never started writing"
            assert child.poll() is None
            time.sleep(0.05)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert (tmp_path / "out/suite.json").read_text() == first
    json.loads(first)
    (tmp_path / "evals/slow.eval.yaml").unlink()
    assert invoke("eval", "evals", "--results-dir", "out").exit_code == 0
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")]
