"""A tree bomb on the history branch: listing it ends in bounded time with a clear message, and a merge
with it is refused instead of walking it."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from trialbook.history import _tree
from trialbook.history._tree import TreeTooLarge, history_files

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]


def _tree_of(repo: pygit2.Repository, oid: pygit2.Oid) -> pygit2.Tree:
    tree = repo[oid]
    assert isinstance(tree, pygit2.Tree)
    return tree


def _bomb(repo: pygit2.Repository, width: int, depth: int) -> pygit2.Oid:
    """A tree ``depth`` levels deep with ``width`` entries a level: width**depth files, few objects."""
    node = repo.create_blob(b"")
    mode = FileMode.BLOB
    for _ in range(depth):
        builder = repo.TreeBuilder()
        for index in range(width):
            builder.insert(f"e{index:02d}.jsonl" if mode == FileMode.BLOB else f"d{index:02d}", node, mode)
        node, mode = builder.write(), FileMode.TREE
    return node


def test_listing_a_branch_holding_a_tree_bomb_ends_with_a_message(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = pygit2.init_repository(str(tmp_path))
    history = _bomb(repo, width=16, depth=7)  # 268 million files: never walked whole
    root = repo.TreeBuilder()
    root.insert("history", history, FileMode.TREE)
    signature = pygit2.Signature("t", "t@example.invalid")
    repo.create_commit("refs/heads/trialbook-results", signature, signature, "bomb", root.write(), [])
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [{name: s, script: 'true'}]\n")
    monkeypatch.setattr(_tree, "MAX_TREE_ENTRIES", 5_000)  # the same bound, reached sooner
    result = invoke("history", "--history-branch", "trialbook-results")
    assert "Traceback" not in result.output
    assert "its tree holds more than 5,000 files and folders; the rest of it was not read" in result.output


def test_the_walk_stops_at_its_bounds_and_says_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = pygit2.init_repository(str(tmp_path))
    monkeypatch.setattr(_tree, "MAX_TREE_ENTRIES", 100)
    with pytest.raises(TreeTooLarge, match="more than 100 files"):
        list(history_files(_tree_of(repo, _bomb(repo, width=4, depth=5))))
    monkeypatch.setattr(_tree, "MAX_TREE_ENTRIES", 10_000)
    monkeypatch.setattr(_tree, "MAX_TREE_DEPTH", 3)
    with pytest.raises(TreeTooLarge, match="deeper than 3 levels"):
        list(history_files(_tree_of(repo, _bomb(repo, width=1, depth=6))))
    whole = list(history_files(_tree_of(repo, _bomb(repo, width=2, depth=3))))
    assert len(whole) == 8  # within the bounds: every file
