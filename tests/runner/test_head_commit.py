"""The commit a run records is the one git itself names, in every layout git writes, read without pygit2.

Each case builds a real repository with the git CLI and compares ``head_commit`` with ``git rev-parse
HEAD`` (``None`` where git has no commit to name). A random walk over branches, detached checkouts,
packed refs and worktrees tries to find a state where the files are read wrong.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.runner.gitrepo import git
from trialbook.select import head_commit


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    return path


def _commit(work: Path, text: str) -> str:
    (work / "file.txt").write_text(text)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", text)
    return git(work, "rev-parse", "HEAD").strip()


def _rev_parse(work: Path) -> str | None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD"], cwd=work, env=env, capture_output=True, text=True
    )
    return done.stdout.strip() if done.returncode == 0 else None


def test_a_branch_a_subfolder_and_packed_refs(tmp_path: Path) -> None:
    work = _repo(tmp_path / "work")
    first = _commit(work, "one")
    (work / "deep" / "er").mkdir(parents=True)
    assert head_commit(work) == first
    assert head_commit(work / "deep" / "er") == first
    git(work, "pack-refs", "--all")
    assert not (work / ".git/refs/heads/main").exists()  # the branch lives in packed-refs only now
    assert head_commit(work) == first
    second = _commit(work, "two")  # a loose ref newer than its packed line wins, as in git
    assert "main" in (work / ".git/packed-refs").read_text()
    assert head_commit(work) == second != first


def test_detached_head_worktrees_and_a_separate_git_folder(tmp_path: Path) -> None:
    work = _repo(tmp_path / "work")
    first = _commit(work, "one")
    second = _commit(work, "two")
    git(work, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"), first)
    assert head_commit(tmp_path / "side") == first
    assert head_commit(work) == second
    git(work, "checkout", "-q", "--detach", first)
    assert head_commit(work) == first
    separate = tmp_path / "separate"
    separate.mkdir()
    git(separate, "init", "-q", "-b", "main", f"--separate-git-dir={tmp_path / 'elsewhere.git'}")
    assert (separate / ".git").is_file()
    assert head_commit(separate) is None  # no commit yet
    assert head_commit(separate) == _rev_parse(separate)
    third = _commit(separate, "three")
    assert head_commit(separate) == third


def test_outside_a_repository_and_without_a_commit(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert head_commit(plain) == _rev_parse(plain)  # None, unless the temp folder sits in a repository
    work = _repo(tmp_path / "fresh")
    assert head_commit(work) is None
    assert _rev_parse(work) is None
    _commit(work, "one")
    git(work, "pack-refs", "--all")
    (work / ".git/packed-refs").unlink()  # the branch HEAD names is gone: unborn again
    assert _rev_parse(work) is None
    assert head_commit(work) is None


def test_layouts_left_to_libgit2_answer_the_same(tmp_path: Path) -> None:
    work = _repo(tmp_path / "work")
    first = _commit(work, "one")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    assert head_commit(bare) == _rev_parse(bare) == first
    # HEAD naming something that is not a branch: git follows it, and so do we (through libgit2).
    git(work, "update-ref", "refs/custom/here", first)
    git(work, "symbolic-ref", "HEAD", "refs/custom/here")
    assert head_commit(work) == _rev_parse(work) == first


def test_a_damaged_repository_leaves_the_commit_unknown(tmp_path: Path) -> None:
    work = _repo(tmp_path / "work")
    _commit(work, "one")
    (work / ".git/HEAD").write_text("garbage\n")
    assert _rev_parse(work) is None
    assert head_commit(work) is None
    (work / ".git/HEAD").write_bytes(b"ref: refs/heads/\xff\xfe\n")
    assert head_commit(work) is None
    (work / ".git/HEAD").write_text("ref: refs/heads/main\n")
    (work / ".git/refs/heads/main").write_text("not an object id\n")
    assert head_commit(work) is None


_STEPS = st.lists(
    st.sampled_from(["commit", "branch", "switch-main", "detach", "pack", "worktree"]),
    min_size=1,
    max_size=8,
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=_STEPS)
def test_any_sequence_of_git_operations_reads_as_git_does(
    tmp_path_factory: pytest.TempPathFactory, steps: list[str]
) -> None:
    root = tmp_path_factory.mktemp("walk")
    work = _repo(root / "work")
    trees = [work]
    commits = [_commit(work, "base")]
    for number, step in enumerate(steps):
        if step == "commit":
            commits.append(_commit(work, f"c{number}"))
        elif step == "branch":
            git(work, "checkout", "-q", "-B", f"b{number}")
        elif step == "switch-main":
            git(work, "checkout", "-q", "main")
        elif step == "detach":
            git(work, "checkout", "-q", "--detach", commits[number % len(commits)])
        elif step == "pack":
            git(work, "pack-refs", "--all")
        elif step == "worktree":
            tree = root / f"wt{number}"
            git(work, "worktree", "add", "-q", "--detach", str(tree), commits[0])
            trees.append(tree)
        for tree in trees:
            assert head_commit(tree) == _rev_parse(tree), (steps[: number + 1], tree)


def test_reading_the_commit_loads_no_libgit2(tmp_path: Path) -> None:
    work = _repo(tmp_path / "work")
    first = _commit(work, "one")
    probe = (
        "import json, sys\nfrom pathlib import Path\nfrom trialbook.select import head_commit\n"
        "print(json.dumps([head_commit(Path('.')), 'pygit2' in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=work, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [first, False]


@pytest.mark.skipif(os.geteuid() != 0, reason="giving the repository to another user needs root")
def test_a_repository_owned_by_another_user_still_names_its_commit(tmp_path: Path) -> None:
    # A checkout mounted into a container is often owned by another uid: libgit2 refused to open it,
    # which stopped the run after its trials, before suite.json was written.
    work = _repo(tmp_path / "work")
    first = _commit(work, "one")
    for path in [work, *work.rglob("*")]:
        os.chown(path, 65534, 65534, follow_symlinks=False)
    import pygit2

    with pytest.raises(pygit2.GitError, match="not owned by current user"):
        pygit2.Repository(str(work))
    assert head_commit(work) == first
    (work / ".git/HEAD").write_text("ref: refs/custom/x\n")  # left to libgit2, which refuses: unknown
    assert head_commit(work) is None
