"""A ``compare: without`` eval through ``trialbook ci`` on a labelled pull request, end to end.

A real git remote holds the history branch and a loopback GitHub API takes the comment. The script
agent creates ``done`` only when ``AGENTS.md`` is in its sandbox, as a model that follows the file
would; the pull request edits only ``AGENTS.md``, so the changed-only selection must pick the eval up.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli

from ..runner.conftest import write
from ..runner.gitrepo import commit_all, git, make_repo
from ._actions import actions_environ
from ._fake_api import FakeGitHub, serve

TOKEN = "ghs_" + "c" * 36
LINE = "with 6/6 (loaded ?/6) · without 0/6 · helps, p = 0.00216"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake


def _ci(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str) -> Result:
    environ = actions_environ(
        tmp_path, fixture, GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url, TRIALBOOK_GITHUB_TOKEN=TOKEN
    )
    for name in ("output", "summary.md"):
        (tmp_path / "runner" / name).write_text("")
    return CliRunner().invoke(cli, ["ci", "evals"], env=environ, catch_exceptions=False)


def test_a_pull_request_editing_agents_md_gets_both_arms_history_and_the_comparison_in_its_comment(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, origin = make_repo(tmp_path / "repos")
    write(work / "AGENTS.md", "Create the file done.\n")
    write(
        work / "evals/follow.eval.yaml",
        """
        prompt_text: do the task
        instructions: [../AGENTS.md]
        agents: [{name: fake, script: "if [ -f AGENTS.md ]; then touch done; fi"}]
        trials: 6
        compare: without
        assert:
          - file_exists: done
        """,
    )
    commit_all(work, "base")
    write(work / "AGENTS.md", "Always create the file done.\n")
    git(work, "commit", "-q", "-am", "sharpen AGENTS.md")
    monkeypatch.chdir(work)

    result = _ci(tmp_path, work, github, "pull_request_labeled")
    assert result.exit_code == 0, result.output
    # The job summary and the comment each show the comparison once.
    summary = (tmp_path / "runner/summary.md").read_text()
    assert "### With and without" in summary
    assert summary.count(f"follow × fake: {LINE}") == 1
    (post,) = [r for r in github.requests if r.method == "POST"]
    assert post.path == "/repos/acme/prompts/issues/42/comments"
    assert post.body["body"].count(LINE) == 1
    assert "fake~without" not in post.body["body"].split("With and without")[0]  # no row of its own

    # Each arm has its own line on the history branch, marked with its arm and its own cache key.
    text = git(origin, "show", "trialbook-results:history/follow.jsonl")
    lines = sorted((json.loads(line) for line in text.splitlines()), key=lambda line: str(line["agent"]))
    assert [(line["agent"], line["extra"]["arm"], line["passed"]) for line in lines] == [
        ("fake", "with", 6),
        ("fake~without", "without", 0),
    ]
    assert lines[1]["extra"]["dropped"] == ["AGENTS.md"]
    assert lines[0]["cache_key"] != lines[1]["cache_key"]

    # The next push: both arms are cached, and the updated comment still shows the comparison.
    again = _ci(tmp_path, work, github, "pull_request_synchronize")
    assert again.exit_code == 0, again.output
    assert len(github.comments[42]) == 1
    body = github.comments[42][0]["body"]
    assert "cached" in body and body.count(LINE) == 1
