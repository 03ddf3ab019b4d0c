"""Every step of the action that stops with exit code 2 says why in the job summary and as an ``::error``.

A usage error (a malformed input passed straight through) is raised by click before the command runs, so
it attacks the path where nothing of trialbook's own reporting has started yet. The run stage hands its
error over in ``ci.json``; the publish step, which runs after a failed run step, shows it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli
from trialbook.github import _ci
from trialbook.runner import _run

from ._actions import actions_environ
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import TOKEN, _outputs, github, workspace

_ = (github, workspace)  # fixtures shared with the ci tests


def _invoke(environ: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=environ, catch_exceptions=False)


def _environ(tmp_path: Path, work: Path, github: FakeGitHub, **extra: str) -> dict[str, str]:
    return actions_environ(
        tmp_path,
        "schedule",
        GITHUB_WORKSPACE=str(work),
        GITHUB_API_URL=github.url,
        TRIALBOOK_RESULTS_DIR=str(work / ".trialbook/results"),
        **extra,
    )


def _summary(tmp_path: Path) -> str:
    return (tmp_path / "runner/summary.md").read_text()


@pytest.mark.parametrize(
    ("variable", "value", "named"),
    [
        ("TRIALBOOK_SHARD", "2of4", "--shard takes I/N such as 2/4, not '2of4'"),
        ("TRIALBOOK_CONCURRENCY", "0", "--concurrency"),
        ("TRIALBOOK_FORCE", "maybe", "--force"),
        ("TRIALBOOK_BUDGET_USD", "-1", "--budget-usd"),
        ("GH_TOKEN", TOKEN, "must not hold a GitHub token (GH_TOKEN)"),
    ],
)
def test_a_run_step_refused_before_it_began_is_shown_by_the_publish_step(
    tmp_path: Path,
    workspace: tuple[Path, Path],
    github: FakeGitHub,
    variable: str,
    value: str,
    named: str,
) -> None:
    work, _ = workspace
    ran = _invoke(_environ(tmp_path, work, github, **{variable: value}), "ci", "--stage", "run", "evals")
    assert ran.exit_code == 2, ran.output
    assert _summary(tmp_path) == ""  # said once, by the publish step
    state = json.loads((work / ".trialbook/results/ci.json").read_text())
    assert state["exit_code"] == 2 and named in state["error"]
    assert not (work / ".trialbook/results/evals").exists()  # nothing ran

    published = _invoke(_environ(tmp_path, work, github, TRIALBOOK_GITHUB_TOKEN=TOKEN), "publish")
    assert published.exit_code == 2, published.output
    (error,) = [line for line in published.output.splitlines() if line.startswith("::error::")]
    assert named in error
    assert "The run stopped:" in _summary(tmp_path) and named in _summary(tmp_path)
    outputs = _outputs(tmp_path)
    assert outputs["summary"] == _summary(tmp_path)  # the output is the job summary
    assert (outputs["passed"], outputs["failed"]) == ("0", "0")
    assert TOKEN not in _summary(tmp_path) + published.output.replace(f"::add-mask::{TOKEN}", "")


def test_a_refused_event_is_handed_over_too(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    """pull_request_target is refused while the event is read, before any eval file is."""
    work, _ = workspace
    environ = _environ(tmp_path, work, github, GITHUB_EVENT_NAME="pull_request_target")
    ran = _invoke(environ, "ci", "--stage", "run", "evals")
    assert ran.exit_code == 2, ran.output
    published = _invoke({**environ, "TRIALBOOK_GITHUB_TOKEN": TOKEN}, "publish")
    assert published.exit_code == 2, published.output
    assert "::error::" in published.output and "pull_request_target" in _summary(tmp_path)


def test_a_publish_step_without_a_hand_over_says_so_in_the_summary(
    tmp_path: Path, github: FakeGitHub
) -> None:
    environ = actions_environ(tmp_path, "schedule", GITHUB_API_URL=github.url)
    (tmp_path / "empty").mkdir()
    published = _invoke(environ, "publish", str(tmp_path / "empty"))
    assert published.exit_code == 2
    assert "::error::" in published.output and "holds no ci.json" in published.output
    assert "The step stopped:" in _summary(tmp_path) and "holds no ci.json" in _summary(tmp_path)
    (tmp_path / "runner/summary.md").write_text("")
    bad = _invoke(environ, "publish", "--comment-header", "end -->", str(tmp_path / "empty"))
    assert bad.exit_code == 2 and "--comment-header" in _summary(tmp_path)


def test_outside_actions_a_usage_error_writes_nothing(tmp_path: Path, workspace: tuple[Path, Path]) -> None:
    work, _ = workspace
    result = _invoke({"TRIALBOOK_SHARD": "x", "GITHUB_ACTIONS": ""}, "ci", "--stage", "run", "evals")
    assert result.exit_code == 2
    assert not (work / ".trialbook").exists()


@pytest.mark.parametrize("stage", ["all", "run"])
def test_the_event_is_decided_and_the_eval_files_loaded_once(
    tmp_path: Path,
    workspace: tuple[Path, Path],
    github: FakeGitHub,
    monkeypatch: pytest.MonkeyPatch,
    stage: str,
) -> None:
    work, _ = workspace
    calls = {"decide": 0, "load": 0}
    decide, load = getattr(_ci, "decide_trigger"), getattr(_run, "load_evals")  # noqa: B009

    def counted_decide(*args: object, **kwargs: object) -> object:
        calls["decide"] += 1
        return decide(*args, **kwargs)

    def counted_load(*args: object, **kwargs: object) -> object:
        calls["load"] += 1
        return load(*args, **kwargs)

    monkeypatch.setattr(_ci, "decide_trigger", counted_decide)
    monkeypatch.setattr(_run, "load_evals", counted_load)
    environ = _environ(tmp_path, work, github)
    if stage == "all":
        environ["TRIALBOOK_GITHUB_TOKEN"] = TOKEN
    result = _invoke(environ, "ci", "--stage", stage, "evals")
    assert result.exit_code == 0, result.output
    assert calls == {"decide": 1, "load": 1}


def test_an_agent_that_cannot_start_is_in_the_summary_and_an_error(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`agents: copilot` on a runner without the Copilot CLI: its pairs are errors naming the fix (exit 1),
    or with --strict-agents the run stops before any trial (exit 2); either is said where people look."""
    work, _ = workspace
    (work / "evals/alpha.eval.yaml").write_text("prompt_text: hi\nagents: [copilot]\n")
    monkeypatch.delenv("COPILOT_CLI_PATH", raising=False)
    ran = _invoke(_environ(tmp_path, work, github), "ci", "--stage", "run", "evals")
    assert ran.exit_code == 1, ran.output
    published = _invoke(_environ(tmp_path, work, github, TRIALBOOK_GITHUB_TOKEN=TOKEN), "publish")
    assert published.exit_code == 1, published.output
    summary = _summary(tmp_path)
    assert "| alpha | copilot |" in summary and "no Copilot CLI" in summary, summary
    (tmp_path / "runner/summary.md").unlink()
    ran = _invoke(_environ(tmp_path, work, github), "ci", "--stage", "run", "--strict-agents", "evals")
    assert ran.exit_code == 2, ran.output
    published = _invoke(_environ(tmp_path, work, github, TRIALBOOK_GITHUB_TOKEN=TOKEN), "publish")
    assert published.exit_code == 2, published.output
    (error,) = [line for line in published.output.splitlines() if line.startswith("::error::")]
    assert "agent copilot" in error and "no Copilot CLI" in error
    assert "The run stopped:" in _summary(tmp_path) and "COPILOT_CLI_PATH" in _summary(tmp_path)


def test_a_fetch_step_that_stops_says_why_in_the_summary(tmp_path: Path, github: FakeGitHub) -> None:
    """A checkout that is no git repository (the checkout step was left out): exit 2, and why."""
    folder = tmp_path / "not-a-checkout"
    folder.mkdir()
    environ = actions_environ(tmp_path, "schedule", GITHUB_WORKSPACE=str(folder), GITHUB_API_URL=github.url)
    fetched = _invoke({**environ, "TRIALBOOK_GITHUB_TOKEN": TOKEN}, "ci", "--stage", "fetch")
    assert fetched.exit_code == 2, fetched.output
    assert "::error::" in fetched.output and "needs a git repository" in fetched.output
    assert "`actions/checkout` with `fetch-depth: 0` before trialbook" in fetched.output
    assert "The step stopped:" in _summary(tmp_path) and "needs a git repository" in _summary(tmp_path)
