"""Outside CI, history is kept in .trialbook/history without options: caching, `history` and `list` work."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .conftest import Invoke, invoke, write
from .gitrepo import commit_all, git, make_repo

__all__ = ["invoke"]

LOCAL: dict[str, str | None] = {"CI": None}


def _evals(root: Path) -> None:
    write(root / "evals/good.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    write(root / "evals/bad.eval.yaml", "prompt_text: hi\nagents: [literal]\nassert:\n  - file_exists: x\n")


def _actions(root: Path) -> dict[str, str]:
    manifest = json.loads((root / ".trialbook/runs/latest/manifest.json").read_text())
    return {p["id"]: p["action"] for p in manifest["pairs"]}


def test_a_second_local_run_is_served_from_the_default_history(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    assert invoke("eval", "--unsafe-local", env=LOCAL).exit_code == 1
    assert sorted(p.name for p in (tmp_path / ".trialbook/history").iterdir()) == [
        ".gitignore",
        "bad.jsonl",
        "good.jsonl",
    ]
    assert invoke("eval", "--unsafe-local", env=LOCAL).exit_code == 1
    assert _actions(tmp_path) == {"good": "cached", "bad": "cached"}
    listed = invoke("list", env=LOCAL)
    assert "cached    good [literal]" in listed.output, listed.output
    shown = invoke("history", env=LOCAL)
    assert shown.exit_code == 0, shown.output
    assert "good" in shown.output and "bad" in shown.output
    # Asking for the failures again runs them, whatever history says.
    assert invoke("eval", "--unsafe-local", "--last-failed", env=LOCAL).exit_code == 1
    assert _actions(tmp_path) == {"good": "filtered", "bad": "run"}


def test_ci_keeps_no_default_history(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    assert invoke("eval").exit_code == 1  # the fixture runs as CI does
    assert invoke("eval").exit_code == 1
    assert not (tmp_path / ".trialbook/history").exists()
    assert _actions(tmp_path) == {"good": "run", "bad": "run"}


def test_history_before_any_run_says_where_it_will_be(invoke: Invoke, tmp_path: Path) -> None:
    shown = invoke("history", env=LOCAL)
    assert shown.exit_code == 0
    assert "no history in .trialbook/history yet" in shown.output
    assert not (tmp_path / ".trialbook").exists()


def test_the_default_history_never_shows_in_git_status(invoke: Invoke, tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path / "repo")
    write(work / "evals/one.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    commit_all(work, "evals")
    os.chdir(work)
    assert invoke("eval", "--unsafe-local", env=LOCAL).exit_code == 0
    assert (work / ".trialbook/history/one.jsonl").is_file()
    assert git(work, "status", "--porcelain", "--untracked-files=all") == ""
