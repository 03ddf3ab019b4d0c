"""The action's split: fetch (token), run (no token), publish (token, no agent), and shards as one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from trialbook.cli import cli

from ..history.conftest import git_daemon, home
from ..runner.gitrepo import git
from ._actions import actions_environ
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import TOKEN, _history, _history_files, _outputs, github, workspace

_ = (git_daemon, home, github, workspace)  # fixtures shared with the history and ci tests


@pytest.fixture
def daemon_root(tmp_path: Path) -> Path:
    """The git daemon serves the workspace's own bare origin."""
    root = tmp_path / "repos"
    root.mkdir(parents=True, exist_ok=True)
    return root


def _environ(tmp_path: Path, work: Path, github: FakeGitHub, fixture: str, token: bool) -> dict[str, str]:
    extra = {"TRIALBOOK_GITHUB_TOKEN": TOKEN} if token else {}
    return actions_environ(tmp_path, fixture, GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url, **extra)


def _invoke(environ: dict[str, str], *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env=environ, catch_exceptions=False)


def _stages(
    tmp_path: Path,
    work: Path,
    github: FakeGitHub,
    fixture: str,
    *run_args: str,
    results: str = ".trialbook/results",
) -> tuple[Result, Result, Result]:
    with_token = _environ(tmp_path, work, github, fixture, token=True)
    without = _environ(tmp_path, work, github, fixture, token=False)
    fetched = _invoke(with_token, "ci", "--stage", "fetch")
    ran = _invoke(without, "ci", "--stage", "run", "--results-dir", results, *run_args, "evals")
    published = _invoke(with_token, "publish", results)
    return fetched, ran, published


def test_the_three_stages_do_what_the_single_step_did(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    fetched, ran, published = _stages(tmp_path, work, github, "pull_request_labeled")
    assert fetched.exit_code == 0, fetched.output
    assert ran.exit_code == 0, ran.output
    assert TOKEN not in ran.output
    assert published.exit_code == 0, published.output
    assert published.output.splitlines()[0] == f"::add-mask::{TOKEN}"

    state = json.loads((work / ".trialbook/results/ci.json").read_text())
    assert state["kind"] == "trialbook-ci" and [r["eval_id"] for r in state["review"]["rows"]] == ["beta"]
    assert TOKEN not in json.dumps(state)
    (line,) = _history(origin, "beta")
    extra = line["extra"]
    assert isinstance(extra, dict)
    assert (extra["event"], extra["ref"]) == ("pull_request", "refs/pull/42/merge")
    assert _outputs(tmp_path)["passed"] == "1"
    assert "beta" in (tmp_path / "runner/summary.md").read_text()
    posts = [r for r in github.requests if r.method == "POST"]
    assert len(posts) == 1 and "beta" in posts[0].body["body"]


def test_the_run_stage_refuses_to_hold_a_token(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    for name in ("TRIALBOOK_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "INPUT_GITHUB-TOKEN"):
        environ = {**_environ(tmp_path, work, github, "schedule", token=False), name: TOKEN}
        result = _invoke(environ, "ci", "--stage", "run", "evals")
        assert result.exit_code == 2, result.output
        assert name in result.output and TOKEN not in result.output
    assert not (work / ".trialbook/results/evals").exists()


def test_three_shards_publish_as_one_run_with_one_push_and_one_comment(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    folders = [f"shard-{index}" for index in (1, 2, 3)]
    without = _environ(tmp_path, work, github, "pull_request_labeled", token=False)
    for index, folder in enumerate(folders, start=1):
        ran = _invoke(
            without,
            "ci",
            "--stage",
            "run",
            "--all",
            "--shard",
            f"{index}/3",
            "--results-dir",
            folder,
            "evals",
        )
        assert ran.exit_code == 0, ran.output
    assert "trialbook-results" not in git(origin, "branch", "--list")  # nothing recorded before publishing
    with_token = _environ(tmp_path, work, github, "pull_request_labeled", token=True)
    published = _invoke(with_token, "publish", *folders)
    assert published.exit_code == 0, published.output

    assert _history_files(origin) == ["history/alpha.jsonl", "history/beta.jsonl"]
    assert git(origin, "rev-list", "--count", "trialbook-results").strip() == "1"  # one push, one commit
    posts = [r for r in github.requests if r.method == "POST"]
    assert len(posts) == 1
    body = posts[0].body["body"]
    assert "alpha" in body and "beta" in body and "other shard" not in body
    assert _outputs(tmp_path)["passed"] == "2"


def test_a_push_the_remote_refuses_is_a_warning_and_the_lines_stay_in_the_folder(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, git_daemon: str
) -> None:
    work, origin = workspace
    # Over git://, so the remote runs its hooks (a push to a local path does not).
    git(work, "remote", "set-url", "origin", f"{git_daemon}origin.git")
    hook = origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'history is frozen this week' >&2\nexit 1\n")
    hook.chmod(0o755)
    _fetched, ran, published = _stages(tmp_path, work, github, "schedule")
    assert ran.exit_code == 0, ran.output
    assert published.exit_code == 0, published.output
    assert "::warning::" in published.output and "History was not recorded" in published.output
    summary = (tmp_path / "runner/summary.md").read_text()
    assert "History was not recorded" in summary and "**2 passed**" in summary
    assert "trialbook-results" not in git(origin, "branch", "--list")
    kept = json.loads((work / ".trialbook/results/ci.json").read_text())["history_lines"]
    assert sorted(line["id"] for line in kept) == ["alpha", "beta"]


def test_a_run_that_stops_before_any_result_shows_its_error_in_the_summary(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    (work / "evals/broken.eval.yaml").write_text("prompt_text: hi\nagents: [literal]\ntrials: many\n")
    _fetched, ran, published = _stages(tmp_path, work, github, "schedule")
    assert ran.exit_code == 2, ran.output
    assert published.exit_code == 2, published.output
    assert "::error::" in published.output and "broken.eval.yaml" in published.output
    summary = (tmp_path / "runner/summary.md").read_text()
    assert "The run stopped" in summary and "broken.eval.yaml" in summary


def test_publish_says_clearly_when_a_folder_holds_no_hand_over(tmp_path: Path, github: FakeGitHub) -> None:
    environ = actions_environ(tmp_path, "schedule", GITHUB_API_URL=github.url)
    (tmp_path / "empty").mkdir()
    result = _invoke(environ, "publish", str(tmp_path / "empty"))
    assert result.exit_code == 2
    assert "holds no ci.json" in result.output and "Traceback" not in result.output


def test_publishing_shards_that_leave_a_pair_unrun_is_a_warning(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    without = _environ(tmp_path, work, github, "schedule", token=False)
    for index in (1, 2):
        ran = _invoke(
            without, "ci", "--stage", "run", "--shard", f"{index}/2", "--results-dir", f"s{index}", "evals"
        )
        assert ran.exit_code == 0, ran.output
    with_token = _environ(tmp_path, work, github, "schedule", token=True)
    whole = _invoke(with_token, "publish", "s1", "s2")
    assert whole.exit_code == 0 and "::warning" not in whole.output, whole.output
    (work / "s3").mkdir()
    (work / "s3/ci.json").write_text((work / "s1/ci.json").read_text())  # shard 1 twice, shard 2 missing
    partial = _invoke(with_token, "publish", "s1", "s3")
    assert "left to another shard that none of the published folders ran" in partial.output


def test_re_running_a_failed_shard_reports_its_newest_attempt_and_records_every_line_once(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    """GitHub's "re-run failed jobs": the publish job then downloads both attempts of the failed shard."""
    work, origin = workspace

    def run(shard: str, attempt: int, folder: str) -> None:
        environ = _environ(tmp_path, work, github, "schedule", token=False)
        environ["GITHUB_RUN_ATTEMPT"] = str(attempt)
        ran = _invoke(environ, "ci", "--stage", "run", "--shard", shard, "--results-dir", folder, "evals")
        assert ran.exit_code in (0, 1), ran.output

    run("1/2", 1, "s1-a1")
    originals = {path: path.read_text() for path in (work / "evals").glob("*.eval.yaml")}
    for path, text in originals.items():  # attempt 1 of shard 2 fails, whatever it holds
        path.write_text(text + "  - file_exists: never-written.txt\n")
    run("2/2", 1, "s2-a1")
    for path, text in originals.items():
        path.write_text(text)
    run("2/2", 2, "s2-a2")
    first = json.loads((work / "s2-a1/ci.json").read_text())
    assert first["run_attempt"] == 1 and first["exit_code"] == 1 and first["review"]["rows"]

    with_token = _environ(tmp_path, work, github, "schedule", token=True)
    attempt_one = _invoke(with_token, "publish", "s1-a1", "s2-a1")  # the first attempt's publish job
    assert attempt_one.exit_code == 1, attempt_one.output
    (tmp_path / "runner/output").write_text("")
    rerun = _invoke(with_token, "publish", "s1-a1", "s2-a1", "s2-a2")  # the re-run's publish job
    assert rerun.exit_code == 0, rerun.output
    assert "shard 2/2: attempt 1 is replaced by attempt 2" in rerun.output
    outputs = _outputs(tmp_path)
    assert (outputs["passed"], outputs["failed"]) == ("2", "0")
    lines = [line for name in ("alpha", "beta") for line in _history(origin, name)]
    run_ids = [line["run_id"] for line in lines]
    assert len(run_ids) == len(set(run_ids)) == 3  # shard 1 once, both attempts of shard 2 once each
    assert sorted(str(line["verdict"]) for line in lines) == ["fail", "pass", "pass"]


def test_publishing_without_a_token_fails_the_job_naming_the_input(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    without = _environ(tmp_path, work, github, "pull_request_labeled", token=False)
    assert _invoke(without, "ci", "--stage", "run", "evals").exit_code == 0
    published = _invoke(without, "publish", ".trialbook/results")
    assert published.exit_code == 2, published.output
    assert "beta" in (tmp_path / "runner/summary.md").read_text()  # the results are still shown
    assert "::error::github-token: the input is empty, so trialbook could not post the PR comment." in (
        published.output
    )
    assert github.requests == []
