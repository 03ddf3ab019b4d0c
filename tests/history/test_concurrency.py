"""Many processes appending and pushing at once lose no line and duplicate none."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from trialbook.history import DEFAULT_BRANCH, GitBranchStore

from .conftest import Remotes
from .helpers import git, git_env

WRITERS = 8
RUNS = 25
SCRIPT = Path(__file__).with_name("writer_script.py")


def _run_writers(tmp_path: Path, clones: list[Path]) -> None:
    start = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), str(clone), str(n), str(RUNS), str(start)],
            env=git_env(tmp_path / "home"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for n, clone in enumerate(clones)
    ]
    start.write_text("go")
    failures = []
    for proc in procs:
        _out, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            failures.append(f"writer exit {proc.returncode}: {err.decode()[-2000:]}")
    assert failures == []


def _remote_lines(remotes: Remotes) -> list[dict[str, object]]:
    files = git(remotes.bare, "ls-tree", "-r", "--name-only", DEFAULT_BRANCH).split()
    found = []
    for path in files:
        shown = git(remotes.bare, "show", f"{DEFAULT_BRANCH}:{path}")
        found += [json.loads(text) for text in shown.splitlines()]
    return found


@pytest.mark.parametrize("transport", ["daemon", "path"])
def test_eight_writers_of_25_runs_leave_exactly_200_lines(
    tmp_path: Path, remotes: Remotes, user_repo: Path, transport: str
) -> None:
    url = remotes.daemon_url if transport == "daemon" else remotes.path_url
    clones = []
    for n in range(WRITERS):
        clone = tmp_path / f"writer-{n}"
        git(tmp_path, "clone", "-q", "--single-branch", "-b", "main", str(remotes.bare), str(clone))
        git(clone, "remote", "set-url", "origin", url)
        clones.append(clone)
    _run_writers(tmp_path, clones)
    found = _remote_lines(remotes)
    assert len(found) == WRITERS * RUNS
    assert len({entry["run_id"] for entry in found}) == WRITERS * RUNS
    per_writer = Counter(str(entry["agent"]) for entry in found)
    assert per_writer == {f"writer-{n}": RUNS for n in range(WRITERS)}
    assert git(remotes.bare, "fsck", "--strict").strip() == ""
    assert "refs/trialbook/" not in git(remotes.bare, "for-each-ref", "--format=%(refname)")
    roots = git(remotes.bare, "rev-list", "--max-parents=0", DEFAULT_BRANCH).split()
    assert not set(roots) & set(git(remotes.bare, "rev-list", "main").split())


def test_processes_appending_in_one_repository_do_not_drop_each_others_commits(user_repo: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from trialbook.history import GitBranchStore\n"
        "from tests.history.helpers import line\n"
        "with GitBranchStore(Path(sys.argv[1]), remote=None) as store:\n"
        "    for i in range(20):\n"
        "        store.append([line('x', f'p{sys.argv[2]}', minutes=i)])\n"
    )
    root = Path(__file__).parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(user_repo), str(n)], cwd=root) for n in range(4)
    ]
    assert [proc.wait(timeout=300) for proc in procs] == [0, 0, 0, 0]
    with GitBranchStore(user_repo, remote=None) as store:
        assert len(store.read("x")) == 80
    assert git(user_repo, "rev-list", "--count", DEFAULT_BRANCH).strip() == "80"


FIRST_COMMIT_WRITER = """
import sys, time
from pathlib import Path
from trialbook.history import GitBranchStore
from tests.history.helpers import line
me, rounds = sys.argv[1], [Path(p) for p in sys.argv[2:]]
for repo in rounds:
    store = GitBranchStore(repo, remote=None)
    (repo / f"ready-{me}").write_text("")
    while not (repo / "go").exists():
        time.sleep(0.0005)
    store.append([line("x", f"p{me}")])
"""
FIRST_COMMIT_WRITERS = 6
FIRST_COMMIT_ROUNDS = 20


def test_processes_making_the_branchs_first_commit_at_once_all_land(tmp_path: Path) -> None:
    """libgit2 writes a ref that does not exist yet without comparing: the first commit is the race.

    Six writers, held at a barrier, append the first line of an empty branch at the same instant, in
    each of many fresh repositories; every round must keep all six lines on one root commit.
    """
    repos = []
    for n in range(FIRST_COMMIT_ROUNDS):
        repo = tmp_path / f"repo-{n}"
        git(tmp_path, "init", "-q", "-b", "main", str(repo))
        git(repo, "commit", "-q", "--allow-empty", "-m", "start")
        repos.append(repo)
    root = Path(__file__).parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", FIRST_COMMIT_WRITER, str(n), *map(str, repos)], cwd=root)
        for n in range(FIRST_COMMIT_WRITERS)
    ]
    for repo in repos:
        while len(list(repo.glob("ready-*"))) < FIRST_COMMIT_WRITERS:
            assert all(proc.poll() is None for proc in procs), "a writer died before its round"
            time.sleep(0.001)
        (repo / "go").write_text("")
    assert [proc.wait(timeout=300) for proc in procs] == [0] * FIRST_COMMIT_WRITERS
    expected = sorted(f"p{n}" for n in range(FIRST_COMMIT_WRITERS))
    lost = {}
    for repo in repos:
        shown = git(repo, "show", f"{DEFAULT_BRANCH}:history/x.jsonl")
        found = sorted(json.loads(text)["agent"] for text in shown.splitlines())
        if found != expected:
            lost[repo.name] = sorted(set(expected) - set(found))
        assert git(repo, "rev-list", "--max-parents=0", "--count", DEFAULT_BRANCH).strip() == "1"
    assert lost == {}
