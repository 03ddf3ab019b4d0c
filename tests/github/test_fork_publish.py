"""Fork pull requests: the run cannot comment; the workflow_run publisher does, reading the folder as data."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli
from trialbook.github._state import MAX_STATE_BYTES

from ..runner.gitrepo import git
from ._actions import actions_environ
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import TOKEN, github, workspace

_ = (github, workspace)  # fixtures shared with the ci tests

HEAD = "2222222222222222222222222222222222222222"


def _invoke(environ: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=environ, catch_exceptions=False)


def _environ(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str, token: bool) -> dict[str, str]:
    extra = {"TRIALBOOK_GITHUB_TOKEN": TOKEN} if token else {}
    environ = actions_environ(
        tmp_path, fixture, GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url, **extra
    )
    for name in ("output", "summary.md"):
        (tmp_path / "runner" / name).write_text("")
    return environ


def _fork_pull(labels: tuple[str, ...] = ("run-evals",), sha: str = HEAD) -> dict[str, Any]:
    return {
        "number": 7,
        "state": "open",
        "labels": [{"name": name} for name in labels],
        "head": {
            "ref": "guide-update",
            "sha": sha,
            "repo": {"full_name": "someone/prompts", "owner": {"login": "someone"}},
        },
    }


def _fork_run(tmp_path: Path, work: Path, github: FakeGitHub) -> Path:
    """The fork's run of the evals workflow: run (no token), then its own publish (read-only token)."""
    ran = _invoke(
        _environ(tmp_path, work, github, "pull_request_fork", token=False), "ci", "--stage", "run", "evals"
    )
    assert ran.exit_code == 0, ran.output
    published = _invoke(_environ(tmp_path, work, github, "pull_request_fork", token=True), "publish")
    assert published.exit_code == 0, published.output
    assert "no PR comment: this pull request comes from a fork" in published.output
    assert "::warning" not in published.output
    return work / ".trialbook/results"


def test_the_workflow_run_publisher_comments_once_on_the_fork_pr_and_records_no_history(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    folder = _fork_run(tmp_path, work, github)
    assert github.requests == []  # the fork's own run asked nothing of the API
    state = json.loads((folder / "ci.json").read_text())
    assert [line["id"] for line in state["history_lines"]] == ["beta"]
    github.pulls = [_fork_pull(sha="1" * 40), _fork_pull()]
    github.heads[7] = HEAD  # the PR's head now: the results are for it, so nothing is marked outdated

    environ = _environ(tmp_path, work, github, "workflow_run_fork", token=True)
    published = _invoke(environ, "publish", str(folder))
    assert published.exit_code == 0, published.output
    posts = [r for r in github.requests if r.method == "POST"]
    assert len(posts) == 1 and posts[0].path == "/repos/acme/prompts/issues/7/comments"
    assert "beta" in posts[0].body["body"]
    (lookup,) = [r for r in github.requests if r.path.startswith("/repos/acme/prompts/pulls?")]
    assert "head=someone%3Aguide-update" in lookup.path and "state=open" in lookup.path
    assert "are not recorded" in published.output
    assert "trialbook-results" not in git(origin, "branch", "--list")
    assert "beta" in (tmp_path / "runner/summary.md").read_text()


@pytest.mark.parametrize(
    ("pulls", "reason"),
    [
        ([_fork_pull(labels=("docs",))], "does not carry the `run-evals` label"),
        ([_fork_pull(sha="3" * 40)], "no open pull request has head someone/prompts@222222222222"),
        ([], "no open pull request has head"),
    ],
    ids=["label-removed", "pushed-again", "closed"],
)
def test_the_workflow_run_publisher_comments_only_on_the_labelled_pr_at_that_commit(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, pulls: list[dict[str, Any]], reason: str
) -> None:
    work, _ = workspace
    folder = _fork_run(tmp_path, work, github)
    github.pulls = pulls
    published = _invoke(
        _environ(tmp_path, work, github, "workflow_run_fork", token=True), "publish", str(folder)
    )
    assert published.exit_code == 0, published.output
    assert reason in published.output
    assert [r for r in github.requests if r.method != "GET"] == []


def test_a_forged_folder_cannot_push_history_and_a_linked_or_huge_ci_json_is_refused(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    folder = _fork_run(tmp_path, work, github)
    state = json.loads((folder / "ci.json").read_text())
    state["push"] = True  # what a fork's code could write
    (folder / "ci.json").write_text(json.dumps(state))
    github.pulls = [_fork_pull()]
    environ = _environ(tmp_path, work, github, "workflow_run_fork", token=True)
    assert _invoke(environ, "publish", str(folder)).exit_code == 0
    assert "trialbook-results" not in git(origin, "branch", "--list")

    secret = tmp_path / "runner-secret.json"
    secret.write_text(json.dumps(state))
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(secret, linked / "ci.json")
    refused = _invoke(environ, "publish", str(linked))
    assert refused.exit_code == 1 and "not a regular file" in refused.output
    huge = tmp_path / "huge"
    huge.mkdir()
    with open(huge / "ci.json", "wb") as handle:
        handle.truncate(MAX_STATE_BYTES + 1)  # sparse: no disk is used
    refused = _invoke(environ, "publish", str(huge))
    assert refused.exit_code == 1 and "larger than 64 MiB" in refused.output
    assert "Traceback" not in refused.output


def test_each_comment_header_keeps_its_own_sticky_comment(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    ran = _invoke(
        _environ(tmp_path, work, github, "pull_request_labeled", token=False), "ci", "--stage", "run", "evals"
    )
    assert ran.exit_code == 0, ran.output
    environ = _environ(tmp_path, work, github, "pull_request_labeled", token=True)
    for header in ("Evals on Linux", "Evals on macOS", "Evals on Linux"):
        published = _invoke(environ, "publish", "--comment-header", header)
        assert published.exit_code == 0, published.output
    comments = github.comments[42]
    assert len(comments) == 2
    assert [c["body"].splitlines()[0] for c in comments] == [
        "<!-- trialbook:sticky:Evals on Linux -->",
        "<!-- trialbook:sticky:Evals on macOS -->",
    ]
    assert "## trialbook evals: Evals on macOS" in comments[1]["body"]
    assert all("<!-- trialbook:sticky -->" not in c["body"] for c in comments)
    assert len([r for r in github.requests if r.method == "PATCH"]) <= 1


def test_the_label_input_decides_which_label_starts_a_run(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    environ = _environ(tmp_path, work, github, "pull_request_labeled", token=False)
    other = _invoke({**environ, "TRIALBOOK_LABEL": "needs-evals"}, "ci", "--stage", "run", "evals")
    assert other.exit_code == 0, other.output
    assert "has no `needs-evals` label" in other.output
    docs = _invoke({**environ, "TRIALBOOK_LABEL": "docs"}, "ci", "--stage", "run", "evals")
    assert "the label `run-evals` was added to PR #42, not `docs`" in docs.output
