"""The publish step reads the run job's artifact as untrusted data: a tampered one is refused whole.

A real ``ci --stage run`` writes the results folder (a labelled pull request, literal agents, a real git
origin); the test then changes its ``ci.json`` the way an agent that controls its runner could, and
``trialbook publish`` must exit 1 with an ``::error``, push no history and post no comment.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli

from ..runner.gitrepo import git
from ._actions import actions_environ
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import TOKEN, github, workspace

_ = (github, workspace)

Tamper = Callable[[dict[str, Any]], None]


def _environ(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str, *, token: bool) -> dict[str, str]:
    extra = {"TRIALBOOK_GITHUB_TOKEN": TOKEN} if token else {}
    return actions_environ(tmp_path, fixture, GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url, **extra)


def _invoke(environ: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=environ, catch_exceptions=False)


def _run(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str) -> Path:
    ran = _invoke(_environ(tmp_path, work, github, fixture, token=False), "ci", "--stage", "run", "evals")
    assert ran.exit_code == 0, ran.output
    return work / ".trialbook/results/ci.json"


def _line(state: dict[str, Any]) -> dict[str, Any]:
    line = state["history_lines"][0]
    assert isinstance(line, dict)
    return line


def _unplanned(state: dict[str, Any]) -> None:
    state["history_lines"].append({**_line(state), "id": "alpha-but-elsewhere"})


def _passes_for_main(state: dict[str, Any]) -> None:
    _line(state)["extra"] = {**_line(state)["extra"], "event": "schedule", "ref": "refs/heads/main"}


def _second_line(state: dict[str, Any]) -> None:
    state["history_lines"].append(dict(_line(state)))


def _command_in_failure(state: dict[str, Any]) -> None:
    state["review"]["rows"][0]["failures"] = ["trial 1: ok\r::add-mask::x", "fine"]


def _command_in_reason(state: dict[str, Any]) -> None:
    state["reason"] = "ran\n::stop-commands::token"


def _schema(state: dict[str, Any]) -> None:
    state["review"]["rows"][0]["passed"] = "all of them"


TAMPERING: dict[str, tuple[Tamper, str]] = {
    "a line for an eval the checkout does not define": (_unplanned, "no eval file of this checkout defines"),
    "a pull request's line marked as the default branch's": (_passes_for_main, "not by this workflow run"),
    "two lines for one pair": (_second_line, "a second line for one pair"),
    "a workflow command after a carriage return": (_command_in_failure, "workflow command"),
    "a workflow command in the reason": (_command_in_reason, "workflow command"),
    "a schema violation": (_schema, "ci.json"),
}


@pytest.mark.parametrize("case", TAMPERING)
def test_a_tampered_artifact_is_refused_with_an_error_and_nothing_is_published(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, case: str
) -> None:
    work, origin = workspace
    path = _run(tmp_path, work, github, "pull_request_labeled")
    state = json.loads(path.read_text())
    tamper, reason = TAMPERING[case]
    tamper(state)
    path.write_text(json.dumps(state))
    published = _invoke(_environ(tmp_path, work, github, "pull_request_labeled", token=True), "publish")
    assert published.exit_code == 1, published.output
    assert "Traceback" not in published.output
    (error,) = [line for line in published.output.splitlines() if line.startswith("::error")]
    assert reason in error and "refused" in error
    assert "trialbook-results" not in git(origin, "branch", "--list")  # no history pushed
    assert github.requests == []  # no comment
    assert "refused" in (tmp_path / "runner/summary.md").read_text()


def test_an_oversized_artifact_is_refused_before_it_is_read(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    path = _run(tmp_path, work, github, "pull_request_labeled")
    with path.open("a") as handle:
        handle.truncate(64 * 2**20 + 1)  # sparse: the size is all that is looked at
    published = _invoke(_environ(tmp_path, work, github, "pull_request_labeled", token=True), "publish")
    assert published.exit_code == 1, published.output
    assert "larger than 64 MiB" in published.output and "refused" in published.output
    assert "trialbook-results" not in git(origin, "branch", "--list")
    assert github.requests == []


def test_the_untampered_artifact_publishes(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    """The control: the same run published as written goes through, so each refusal above is the check's."""
    work, origin = workspace
    _run(tmp_path, work, github, "pull_request_labeled")
    published = _invoke(_environ(tmp_path, work, github, "pull_request_labeled", token=True), "publish")
    assert published.exit_code == 0, published.output
    assert "trialbook-results" in git(origin, "branch", "--list")
    assert len([r for r in github.requests if r.method == "POST"]) == 1
