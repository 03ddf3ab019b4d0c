"""sync(): fetch, union merge and push against a real bare remote, by path and through git daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trialbook.history import DEFAULT_BRANCH, GitBranchStore, HistoryLine, HistoryPushError

from .conftest import Remotes
from .helpers import git, line


def _clone(tmp_path: Path, remotes: Remotes, name: str, url: str) -> Path:
    """A checkout the way CI makes one: only main, then origin pointed at ``url``."""
    clone = tmp_path / name
    git(tmp_path, "clone", "-q", "--single-branch", "-b", "main", str(remotes.bare), str(clone))
    git(clone, "remote", "set-url", "origin", url)
    return clone


def _remote_run_ids(remotes: Remotes, path: str) -> list[str]:
    shown = git(remotes.bare, "show", f"{DEFAULT_BRANCH}:history/{path}")
    return [json.loads(text)["run_id"] for text in shown.splitlines()]


def _ids(lines: list[HistoryLine]) -> list[str]:
    return [each.run_id for each in lines]


@pytest.fixture(params=["path", "daemon"])
def url(request: pytest.FixtureRequest, remotes: Remotes, user_repo: Path) -> str:
    chosen: str = remotes.path_url if request.param == "path" else remotes.daemon_url
    return chosen


def test_both_sides_extend_the_base_remote_lines_first_then_ours(
    tmp_path: Path, remotes: Remotes, url: str
) -> None:
    a, b = _clone(tmp_path, remotes, "a", url), _clone(tmp_path, remotes, "b", url)
    base = line("x", minutes=0)
    with GitBranchStore(a) as store_a, GitBranchStore(b) as store_b:
        store_a.append([base])
        assert store_a.sync().action == "pushed"
        assert store_b.sync().action == "fast-forwarded"
        theirs, ours = line("x", minutes=1), line("x", minutes=2)
        store_a.append([theirs])
        store_a.sync()
        store_b.append([ours])
        report = store_b.sync()
        assert report.action == "merged-and-pushed"
        assert report.merges == 1
        assert _ids(store_b.read("x")) == _ids([base, theirs, ours])
    assert _remote_run_ids(remotes, "x.jsonl") == _ids([base, theirs, ours])
    parents = git(remotes.bare, "rev-list", "--parents", "-n", "1", DEFAULT_BRANCH).split()
    assert len(parents) == 3  # the merge commit: [ours, theirs]
    assert parents[2] == git(a, "rev-parse", DEFAULT_BRANCH).strip()
    assert git(remotes.bare, "fsck", "--strict").strip() == ""


def test_two_first_writers_with_unrelated_roots_keep_every_line(
    tmp_path: Path, remotes: Remotes, url: str
) -> None:
    a, b = _clone(tmp_path, remotes, "a", url), _clone(tmp_path, remotes, "b", url)
    with GitBranchStore(a) as store_a, GitBranchStore(b) as store_b:
        theirs = [line("x", minutes=1), line("y", minutes=1)]
        ours = [line("x", minutes=2), line("z", minutes=2)]
        store_a.append(theirs)
        store_b.append(ours)  # an orphan root of its own: the branch exists nowhere it knows of
        store_a.sync()
        assert store_b.sync().action == "merged-and-pushed"
        assert store_a.sync().action == "fast-forwarded"
        for store in (store_a, store_b):
            assert _ids(store.read("x")) == _ids([theirs[0], ours[0]])
            assert store.ids() == ["x", "y", "z"]
    roots = git(remotes.bare, "rev-list", "--max-parents=0", DEFAULT_BRANCH).split()
    assert len(roots) == 2
    assert not set(roots) & set(git(remotes.bare, "rev-list", "main").split())


def test_fetch_only_when_pushing_is_off(tmp_path: Path, remotes: Remotes, url: str) -> None:
    a, b = _clone(tmp_path, remotes, "a", url), _clone(tmp_path, remotes, "b", url)
    shared = line("x")
    with GitBranchStore(a) as writer, GitBranchStore(b, push=False) as reader:
        writer.append([shared])
        writer.sync()
        assert reader.sync().action == "fast-forwarded"
        reader.append([line("x", minutes=1)])
        assert reader.sync().action == "not-pushed"
    assert _remote_run_ids(remotes, "x.jsonl") == [shared.run_id]


def test_sync_with_nothing_anywhere_and_without_a_remote(tmp_path: Path, remotes: Remotes, url: str) -> None:
    a = _clone(tmp_path, remotes, "a", url)
    with GitBranchStore(a) as store:
        assert store.sync().action == "nothing"
    with GitBranchStore(a, remote=None) as local:
        local.append([line("x")])
        report = local.sync()
    assert report.action == "local-only"
    assert report.tip == git(a, "rev-parse", DEFAULT_BRANCH).strip()


def test_a_hook_refusal_fails_at_once_with_its_message_and_keeps_the_local_commit(
    tmp_path: Path, remotes: Remotes, user_repo: Path
) -> None:
    hook = remotes.bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'history is frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    a = _clone(tmp_path, remotes, "a", remotes.daemon_url)
    kept = line("x")
    with GitBranchStore(a, max_attempts=3) as store:
        store.append([kept])
        with pytest.raises(HistoryPushError) as caught:
            store.sync()
        assert store.read("x") == [kept]
    message = str(caught.value)
    assert "history is frozen" in message  # the hook's own words
    assert "Not retried" in message
    assert DEFAULT_BRANCH in message
    assert git(a, "rev-parse", DEFAULT_BRANCH).strip() in message
    assert git(remotes.bare, "branch", "--list", DEFAULT_BRANCH).strip() == ""


def test_shallow_clone_keeps_its_shallow_file_and_stays_readable(
    tmp_path: Path, remotes: Remotes, user_repo: Path
) -> None:
    seed = _clone(tmp_path, remotes, "seed", remotes.path_url)
    (seed / "more.txt").write_text("second commit\n")
    git(seed, "add", "more.txt")
    git(seed, "commit", "-q", "-m", "second")
    git(seed, "push", "-q", "origin", "main")
    shallow_clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{remotes.bare}", str(shallow_clone))
    shallow_file = shallow_clone / ".git" / "shallow"
    before = shallow_file.read_bytes()
    with GitBranchStore(shallow_clone) as store, GitBranchStore(seed) as other:
        for minute in range(3):
            # New commits from another writer make the fetch transfer objects, which is when
            # libgit2's local transport drops .git/shallow.
            other.append([line("x", "other", minutes=minute)])
            other.sync()
            store.append([line("x", minutes=minute)])
            store.sync()
        assert len(store.read("x")) == 6
    assert shallow_file.read_bytes() == before
    assert git(shallow_clone, "log", "--oneline", "main").count("\n") == 1
    git(shallow_clone, "log", "--oneline", DEFAULT_BRANCH)
    git(shallow_clone, "fsck")
    assert len(_remote_run_ids(remotes, "x.jsonl")) == 6


def test_path_remote_private_ref_is_removed_on_close(
    tmp_path: Path, remotes: Remotes, user_repo: Path
) -> None:
    a = _clone(tmp_path, remotes, "a", remotes.path_url)
    with GitBranchStore(a) as store:
        store.append([line("x")])
        store.sync()
        assert "refs/trialbook/writers/" in git(remotes.bare, "for-each-ref", "--format=%(refname)")
    assert "refs/trialbook/" not in git(remotes.bare, "for-each-ref", "--format=%(refname)")
