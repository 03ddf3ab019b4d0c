"""GitBranchStore against real repositories: objects only, orphan branch, readable with plain git."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pygit2
import pytest

from trialbook.errors import UsageError
from trialbook.history import DEFAULT_BRANCH, GitBranchStore, HistoryLine
from trialbook.history._tree import HISTORY, write_files

from .helpers import git, line, snapshot


def _dirty(work: Path) -> None:
    """An unstaged edit, a staged new file and an untracked file, as a user mid-work would have."""
    (work / "README.md").write_text("# project\nedited, not staged\n")
    (work / "staged.txt").write_text("staged\n")
    git(work, "add", "staged.txt")
    (work / "untracked.txt").write_text("untracked\n")


def test_append_then_read_round_trips_every_field(user_repo: Path) -> None:
    written = [
        line("setup/neon", "copilot", minutes=1, cost_usd=0.25, model="gpt-5.2", extra={"shard": "1/2"}),
        line("setup/neon", "literal", minutes=2, pass_rate=None, passed=0, verdict="error", duration_s=None),
    ]
    with GitBranchStore(user_repo, remote=None) as store:
        store.append(written)
        assert store.read("setup/neon") == written
        assert store.ids() == ["setup/neon"]
        assert store.read("other") == []
        assert store.problems == []


def test_branch_is_an_orphan_holding_only_history(user_repo: Path) -> None:
    with GitBranchStore(user_repo, remote=None) as store:
        store.append([line("a")])
        store.append([line("group/b c", minutes=1)])
    roots = git(user_repo, "rev-list", "--max-parents=0", DEFAULT_BRANCH).split()
    main_commits = set(git(user_repo, "rev-list", "main").split())
    assert len(roots) == 1
    assert roots[0] not in main_commits
    assert git(user_repo, "rev-list", "--count", DEFAULT_BRANCH).strip() == "2"
    files = git(user_repo, "ls-tree", "-r", "--name-only", DEFAULT_BRANCH).split("\n")
    assert [f for f in files if f] == ["history/a.jsonl", "history/group/b%20c.jsonl"]


def test_checkout_state_is_untouched_by_append_and_sync(user_repo: Path) -> None:
    _dirty(user_repo)
    before = snapshot(user_repo)
    index_before = (user_repo / ".git" / "index").read_bytes()
    with GitBranchStore(user_repo) as store:
        store.append([line("a"), line("b")])
        report = store.sync()
        store.append([line("a", minutes=5)])
        store.sync()
    assert report.action == "pushed"
    assert snapshot(user_repo) == before
    assert (user_repo / ".git" / "index").read_bytes() == index_before
    assert git(user_repo, "symbolic-ref", "HEAD").strip() == "refs/heads/main"


def test_plain_git_reads_what_was_written(user_repo: Path) -> None:
    written = [line("setup/neon", "copilot", minutes=m) for m in range(3)]
    with GitBranchStore(user_repo, remote=None) as store:
        store.append(written[:2])
        store.append(written[2:])
    log = git(user_repo, "log", "--format=%an <%ae>|%s", DEFAULT_BRANCH).splitlines()
    assert len(log) == 2
    assert all(entry.startswith("trialbook <trialbook@users.noreply.github.com>|") for entry in log)
    shown = git(user_repo, "show", f"{DEFAULT_BRANCH}:history/setup/neon.jsonl")
    assert shown.endswith("\n")
    assert [json.loads(text)["run_id"] for text in shown.splitlines()] == [w.run_id for w in written]
    assert shown.splitlines()[0] == written[0].to_json_line()
    assert git(user_repo, "fsck", "--strict").strip() == ""


def test_latest_uses_started_at_not_file_order(user_repo: Path) -> None:
    with GitBranchStore(user_repo, remote=None) as store:
        newest = line("x", "copilot", minutes=30)
        store.append([newest, line("x", "copilot", minutes=10), line("x", "literal", minutes=99)])
        store.append([line("x", "copilot", minutes=20)])
        assert store.latest("x", "copilot") == newest
        assert store.latest("x", "codex") is None
        assert store.latest("missing", "copilot") is None


def test_appends_on_top_of_the_fetched_branch_when_no_local_branch(user_repo: Path, tmp_path: Path) -> None:
    with GitBranchStore(user_repo) as store:
        first = line("a")
        store.append([first])
        store.sync()
    clone = tmp_path / "clone"
    origin = str(tmp_path / "served" / "origin.git")
    git(tmp_path, "clone", "-q", "--single-branch", "-b", "main", origin, str(clone))
    with GitBranchStore(clone) as other:
        assert other.read("a") == []  # nothing fetched yet
        assert other.sync().action == "fast-forwarded"
        assert other.read("a") == [first]
        second = line("a", minutes=1)
        other.append([second])
        assert other.read("a") == [first, second]
    parents = git(clone, "rev-list", "--parents", "-n", "1", DEFAULT_BRANCH).split()
    assert len(parents) == 2  # the new commit has the fetched tip as its parent


def _commit_raw(repo_path: Path, data: bytes) -> None:
    """Put a hand-written history file on the branch, the way a user editing it by hand might."""
    repo = pygit2.Repository(str(repo_path))
    ref = repo.references.get(f"refs/heads/{DEFAULT_BRANCH}")
    assert ref is not None
    parent = repo[ref.target].peel(pygit2.Commit)
    history = parent.tree[HISTORY].peel(pygit2.Tree)
    new_history = write_files(repo, history, {("x.jsonl",): repo.create_blob(data)})
    root = repo.TreeBuilder(parent.tree)
    root.insert(HISTORY, new_history, pygit2.enums.FileMode.TREE)
    sig = pygit2.Signature("someone", "someone@example.com")
    repo.create_commit(ref.name, sig, sig, "hand edit", root.write(), [parent.id])


def test_a_corrupt_line_is_reported_and_skipped_never_deleted(
    user_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = line("x", minutes=1)
    with GitBranchStore(user_repo, remote=None) as store:
        store.append([line("seed")])
        bad = b'{"agent": "literal", "id": "x"}\nnot json at all\n'
        _commit_raw(user_repo, good.to_json_line().encode() + b"\n" + bad)
        later = line("x", minutes=2)
        with caplog.at_level(logging.DEBUG, logger="trialbook.history"):
            store.append([later])
            assert store.read("x") == [good, later]
            assert store.read("x") == [good, later]
            assert store.latest("x", "literal") == later
    # Each bad line is one problem however often the file is read; the front end prints each once.
    assert [p.split(": ", 1)[0] for p in store.problems] == [
        f"{DEFAULT_BRANCH}:history/x.jsonl:2",
        f"{DEFAULT_BRANCH}:history/x.jsonl:3",
    ]
    assert "missing field" in store.problems[0] and "not valid JSON" in store.problems[1]
    assert "history/x.jsonl:3" in caplog.text
    shown = git(user_repo, "show", f"{DEFAULT_BRANCH}:history/x.jsonl")
    assert "not json at all" in shown  # the bad line is still there


def test_missing_trailing_newline_is_repaired_on_append(user_repo: Path) -> None:
    first = line("x")
    with GitBranchStore(user_repo, remote=None) as store:
        store.append([line("seed")])
        _commit_raw(user_repo, first.to_json_line().encode())  # no "\n" at the end
        second = line("x", minutes=1)
        store.append([second])
        assert store.read("x") == [first, second]


def test_refuses_when_the_history_branch_is_checked_out(user_repo: Path) -> None:
    with GitBranchStore(user_repo, remote=None) as store:
        store.append([line("a")])
    git(user_repo, "checkout", "-q", DEFAULT_BRANCH)
    with GitBranchStore(user_repo, remote=None) as store, pytest.raises(UsageError, match="checked out"):
        store.append([line("a", minutes=1)])


def test_bad_construction_arguments_are_usage_errors(user_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    with pytest.raises(UsageError, match="not inside a git repository"):
        GitBranchStore(outside)
    with pytest.raises(UsageError, match="not a valid git branch name"):
        GitBranchStore(user_repo, "bad..name", remote=None)
    with pytest.raises(UsageError, match="no remote named 'upstream'"):
        GitBranchStore(user_repo, remote="upstream")


def test_lines_are_unique_per_run(user_repo: Path) -> None:
    same_numbers = [line("x"), line("x")]
    assert same_numbers[0].run_id != same_numbers[1].run_id
    with GitBranchStore(user_repo, remote=None) as store:
        store.append(same_numbers)
        read: list[HistoryLine] = store.read("x")
    assert read == same_numbers
