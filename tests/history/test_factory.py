"""open_store: the CLI's history options mapped to a store, or a clear usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialbook.errors import UsageError
from trialbook.history import DirectoryStore, GitBranchStore, HistoryStore, open_store

from .helpers import git


def test_directory_branch_and_off(tmp_path: Path, user_repo: Path) -> None:
    by_dir = open_store(
        history_dir=tmp_path / "h", history_branch=None, repo_path=user_repo, push=False, token=None
    )
    assert isinstance(by_dir, DirectoryStore)
    assert isinstance(by_dir, HistoryStore)
    by_branch = open_store(
        history_dir=None, history_branch="results", repo_path=user_repo / "src", push=True, token="t"
    )
    assert isinstance(by_branch, GitBranchStore)
    assert isinstance(by_branch, HistoryStore)
    assert by_branch.branch == "results"
    assert by_branch.push_enabled
    assert (
        open_store(history_dir=None, history_branch=None, repo_path=user_repo, push=False, token=None) is None
    )


def test_without_push_the_branch_store_still_fetches_from_origin(user_repo: Path) -> None:
    store = open_store(history_dir=None, history_branch="r", repo_path=user_repo, push=False, token=None)
    assert isinstance(store, GitBranchStore)
    assert store.remote is not None
    assert not store.push_enabled


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"history_dir": Path("d"), "history_branch": "b"}, "alternatives"),
        ({"history_dir": Path("d"), "push": True}, "--no-push"),
        ({"push": True}, "--push needs --history-branch"),
    ],
)
def test_conflicting_options(user_repo: Path, kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {"history_dir": None, "history_branch": None, "push": False, "token": None}
    args.update(kwargs)
    with pytest.raises(UsageError, match=message):
        open_store(repo_path=user_repo, **args)  # type: ignore[arg-type]


def test_branch_needs_a_repository_and_push_needs_origin(tmp_path: Path, user_repo: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UsageError, match="needs a git repository"):
        open_store(history_dir=None, history_branch="b", repo_path=plain, push=False, token=None)
    git(user_repo, "remote", "remove", "origin")
    with pytest.raises(UsageError, match="remote named 'origin'"):
        open_store(history_dir=None, history_branch="b", repo_path=user_repo, push=True, token=None)
    local = open_store(history_dir=None, history_branch="b", repo_path=user_repo, push=False, token=None)
    assert isinstance(local, GitBranchStore)
    assert local.remote is None
