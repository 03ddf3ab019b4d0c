"""Recording the same run's lines again keeps them once, in both stores, read back with plain git."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trialbook.history import DEFAULT_BRANCH, DirectoryStore, GitBranchStore

from .helpers import git, line

# A pool of distinct lines (each has its own run_id); batches draw from it with repeats.
POOL = [line(f"e{n % 3}", f"a{n % 2}", minutes=n) for n in range(8)]
batches = st.lists(st.lists(st.integers(0, len(POOL) - 1), max_size=6), min_size=1, max_size=5)


def _expected(drawn: list[list[int]]) -> dict[str, list[str]]:
    """Per eval id, each distinct line once, in the order it was first appended."""
    seen: dict[str, list[str]] = {}
    for batch in drawn:
        for index in batch:
            entry = POOL[index]
            texts = seen.setdefault(entry.id, [])
            if entry.run_id not in texts:
                texts.append(entry.run_id)
    return {k: v for k, v in seen.items() if v}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(drawn=batches)
def test_the_branch_holds_each_line_once_however_often_it_is_appended(drawn: list[list[int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        (Path(tmp) / "home").mkdir()
        git(Path(tmp), "init", "-q", "-b", "main", str(repo))
        git(repo, "commit", "-q", "--allow-empty", "-m", "start")
        with GitBranchStore(repo, remote=None) as store:
            for batch in drawn:
                store.append([POOL[i] for i in batch])
        expected = _expected(drawn)
        if not expected:
            assert git(repo, "branch", "--list", DEFAULT_BRANCH).strip() == ""
            return
        for eval_id, run_ids in expected.items():
            shown = git(repo, "show", f"{DEFAULT_BRANCH}:history/{eval_id}.jsonl").splitlines()
            assert [json.loads(text)["run_id"] for text in shown] == run_ids
        # A batch that adds nothing makes no commit.
        productive = 0
        seen: set[str] = set()
        for batch in drawn:
            fresh = {POOL[i].run_id for i in batch} - seen
            productive += bool(fresh)
            seen |= fresh
        assert git(repo, "rev-list", "--count", DEFAULT_BRANCH).strip() == str(productive)


@settings(max_examples=50, deadline=None)
@given(drawn=batches)
def test_a_history_folder_holds_each_line_once_however_often_it_is_appended(drawn: list[list[int]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = DirectoryStore(Path(tmp))
        for batch in drawn:
            store.append([POOL[i] for i in batch])
        for eval_id, run_ids in _expected(drawn).items():
            assert [entry.run_id for entry in store.read(eval_id)] == run_ids
            assert store.read(eval_id) == [next(p for p in POOL if p.run_id == r) for r in run_ids]
