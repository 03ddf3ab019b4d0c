"""A pull request that only edits an assertion is re-scored in CI: no agent trial, and it says so.

A real git remote holds the history branch and a loopback GitHub API takes the comment. The nightly
run leaves its results folder in the workspace (as a cache or a downloaded artifact would); the pull
request's run then checks those recorded trials again instead of running the agent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli
from trialbook.sandbox.supervisor import Supervisor

from ..runner.conftest import write
from ..runner.gitrepo import commit_all, git, make_repo
from ._actions import actions_environ
from ._fake_api import FakeGitHub, serve

TOKEN = "ghs_" + "d" * 36


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake


def _ci(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str, **more: str) -> Result:
    environ = actions_environ(
        tmp_path,
        fixture,
        GITHUB_WORKSPACE=str(work),
        GITHUB_API_URL=github.url,
        TRIALBOOK_GITHUB_TOKEN=TOKEN,
        **more,
    )
    for name in ("output", "summary.md"):
        (tmp_path / "runner" / name).write_text("")
    return CliRunner().invoke(cli, ["ci", "evals"], env=environ, catch_exceptions=False)


def _eval(work: Path, starts: Path, pattern: str) -> None:
    script = f"rm old.txt; echo 'version: 2' > out.txt; echo ran >> {starts}"
    write(
        work / "evals/work.eval.yaml",
        f"""
        prompt_text: do the work
        sandbox: {{template: template}}
        trials: 3
        agents: [{{name: fake, script: {json.dumps(script)}}}]
        assert:
          - file_contains: {{path: out.txt, pattern: "{pattern}"}}
        """,
    )


@pytest.mark.parametrize("where", ["workspace", "artifact"])
def test_a_pull_request_editing_only_an_assertion_is_rescored(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    started: list[int] = []
    original = Supervisor.started

    def record(self: Supervisor, pid: int, env: Any) -> None:
        started.append(pid)
        original(self, pid, env)

    monkeypatch.setattr(Supervisor, "started", record)
    work, origin = make_repo(tmp_path / "repos")
    starts = tmp_path / "starts.log"
    write(work / "evals/template/old.txt", "old\n")
    _eval(work, starts, "version: 1")
    commit_all(work, "base")
    monkeypatch.chdir(work)

    nightly = _ci(tmp_path, work, github, "schedule")
    assert nightly.exit_code == 1, nightly.output  # the agent writes version 2
    assert len(starts.read_text().splitlines()) == 3 and started

    _eval(work, starts, "version: 2")
    git(work, "commit", "-q", "-am", "fix the expected version")
    more = {}
    if where == "artifact":  # a fresh checkout, given the nightly run's downloaded results artifact
        (work / ".trialbook/results").rename(tmp_path / "artifact")
        more["TRIALBOOK_RESCORE_FROM"] = str(tmp_path / "artifact")
    started.clear()
    result = _ci(tmp_path, work, github, "pull_request_labeled", **more)
    assert result.exit_code == 0, result.output
    assert started == [] and len(starts.read_text().splitlines()) == 3  # 0 agent trials
    assert "rescored" in result.output
    summary = (tmp_path / "runner/summary.md").read_text()
    assert "rescored from the recorded trials of run" in summary
    assert "rescored from the recorded trials of run" in github.comments[42][0]["body"]
    text = git(origin, "show", "trialbook-results:history/work.jsonl")
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(line["verdict"], "rescored_from" in line["extra"]) for line in lines] == [
        ("fail", False),
        ("pass", True),
    ]
    assert (
        lines[1]["extra"]["rescored_from"]
        == json.loads((work / ".trialbook/results/manifest.json").read_text())["pairs"][0]["rescored_from"]
    )
