"""A pull request that edits a skill's description: the comment compares triggering with the base branch.

Simulated Actions steps, a real git remote for history, the real Codex CLI against a loopback model
that reads the skill whenever the skill's description carries a marker.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell
from trialbook.cli import cli

from ..runner.conftest import write
from ..runner.gitrepo import commit_all, git, make_repo
from ._actions import actions_environ
from ._fake_api import FakeGitHub, serve

pytestmark = pytest.mark.real_cli

TOKEN = "ghs_" + "t" * 36
KEY = "sk-fake-codex-" + "3c" * 20
MARKER = "ships-marker-9e21"


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake


def _skill(work: Path, description: str) -> None:
    write(
        work / "skills/deploy/SKILL.md",
        f"---\nname: deploy\ndescription: {description}\n---\nRun acme deploy.\n",
    )


def _repo(tmp_path: Path, url: str) -> tuple[Path, Path]:
    work, origin = make_repo(tmp_path / "repos")
    _skill(work, f"Deploys and {MARKER} the app with acme.")
    write(
        work / "evals/deploy.eval.yaml",
        textwrap.dedent(
            f"""\
            secrets: [FAKE_CODEX_KEY]
            skills: [../skills/deploy]
            agents:
              - name: codex
                binary: {ensure_cli("@openai/codex")}
                model: gpt-5.5
                base_url: {url}
                env: {{CODEX_API_KEY: "{{{{ secrets.FAKE_CODEX_KEY }}}}"}}
            trials: 3
            timeout: 60s
            triggers:
              skill: deploy
              queries:
                - {{query: "Deploy the starter app to staging", expect: should, id: staging}}
                - {{query: "Put this build on production", expect: should, id: production}}
                - {{query: "Run the unit tests", expect: should_not, id: tests}}
            """
        ),
    )
    commit_all(work, "base")
    return work, origin


def _ci(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str) -> Result:
    step = {"GITHUB_WORKSPACE": str(work), "GITHUB_API_URL": github.url, "TRIALBOOK_GITHUB_TOKEN": TOKEN}
    environ = actions_environ(tmp_path, fixture, FAKE_CODEX_KEY=KEY, **step)
    return CliRunner().invoke(cli, ["ci", "evals"], env=environ, catch_exceptions=False)


def _comment_after(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, description: str
) -> str:
    """The PR comment after a nightly on the base and a labelled PR that sets the skill's description."""
    read_skill = [shell("cat .agents/skills/deploy/SKILL.md"), say("Deployed.")]
    with ModelServer([say("Done.")], when={MARKER: read_skill}) as server:
        work, _ = _repo(tmp_path, server.openai_url)
        monkeypatch.chdir(work)
        nightly = _ci(tmp_path, work, github, "schedule")
        assert nightly.exit_code == 0, nightly.output
        _skill(work, description)
        git(work, "commit", "-q", "-am", "a new description")
        pull = _ci(tmp_path, work, github, "pull_request_labeled")
    assert pull.exit_code == 0, pull.output  # no thresholds: the comparison is reported, not enforced
    [comment] = github.comments[42]
    return str(comment["body"])


def test_a_description_edit_that_loses_the_skill_is_a_significant_recall_drop_in_the_comment(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _comment_after(tmp_path, github, monkeypatch, "Deploys the app with acme.")
    assert "### Skill triggering" in body, body
    assert "recall 1.00 (6/6) → 0.00 (0/6), p = 0.00216 (significant)" in body, body
    assert "2 queries lost: staging, production" in body


def test_an_edit_that_changes_no_choice_says_so_in_the_comment(
    tmp_path: Path, github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _comment_after(tmp_path, github, monkeypatch, f"Deploys, checks and {MARKER} the app with acme.")
    assert "recall 1.00 (6/6) · precision 0.67 (6/9)" in body, body
    assert "vs base: no change" in body
