"""``trialbook ci`` end to end for each trigger: simulated Actions step, real git remote, loopback API."""

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

TOKEN = "ghs_" + "k" * 36


def _evals(work: Path) -> None:
    for name in ("alpha", "beta"):
        write(work / f"evals/prompts/{name}.md", f"```bash\ntool {name} > {name}.txt\n```\n")
        write(
            work / f"evals/{name}.eval.yaml",
            f"""
            prompt: prompts/{name}.md
            agents: [literal]
            shims:
              tool: {{script: 'echo "tool $1"'}}
            assert:
              - ran: tool {name}
              - file_exists: {name}.txt
            """,
        )


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    return make_workspace(tmp_path, monkeypatch)


def make_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A checkout whose HEAD changes beta's prompt on top of origin/main (the PR's base)."""
    work, origin = make_repo(tmp_path / "repos")
    _evals(work)
    commit_all(work, "base")
    prompt = work / "evals/prompts/beta.md"
    prompt.write_text(prompt.read_text().replace("tool beta", "tool beta --verbose"))
    git(work, "commit", "-q", "-am", "change beta's prompt")
    monkeypatch.chdir(work)
    return work, origin


def _ci(
    tmp_path: Path, work: Path, github: FakeGitHub, fixture: str, *args: str
) -> tuple[Result, dict[str, str]]:
    environ = actions_environ(
        tmp_path, fixture, GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url, TRIALBOOK_GITHUB_TOKEN=TOKEN
    )
    for name in ("output", "summary.md"):
        (tmp_path / "runner" / name).write_text("")
    result = CliRunner().invoke(cli, ["ci", *args, "evals"], env=environ, catch_exceptions=False)
    return result, environ


def _outputs(tmp_path: Path) -> dict[str, str]:
    text = (tmp_path / "runner/output").read_text()
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, _, delimiter = line.partition("<<")
        value: list[str] = []
        for inner in lines:
            if inner == delimiter:
                break
            value.append(inner)
        outputs[name] = "\n".join(value)
    return outputs


def _history(origin: Path, eval_id: str) -> list[dict[str, object]]:
    text = git(origin, "show", f"trialbook-results:history/{eval_id}.jsonl")
    return [json.loads(line) for line in text.splitlines()]


def _history_files(origin: Path) -> list[str]:
    return git(origin, "ls-tree", "-r", "--name-only", "trialbook-results").split()


def test_labelled_pull_request_runs_only_the_changed_eval_and_comments_once(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    result, _ = _ci(tmp_path, work, github, "pull_request_labeled")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == f"::add-mask::{TOKEN}"
    assert result.output.count(TOKEN) == 1
    assert sorted(p.name for p in (work / ".trialbook/results/evals").iterdir()) == ["beta"]

    assert _history_files(origin) == ["history/beta.jsonl"]
    (line,) = _history(origin, "beta")
    assert (line["agent"], line["verdict"], line["passed"], line["trials"]) == ("literal", "pass", 1, 1)
    extra = line["extra"]
    assert isinstance(extra, dict)
    assert str(extra.pop("control_key")).startswith("sha256:")
    # vacuous False: the eval's negative control failed its assertions, as it should.
    assert extra == {"event": "pull_request", "ref": "refs/pull/42/merge", "vacuous": False}
    assert line["ci_run"] == "https://github.com/acme/prompts/actions/runs/123456789"

    outputs = _outputs(tmp_path)
    assert (outputs["passed"], outputs["failed"], outputs["cached"], outputs["cost-usd"]) == (
        "1",
        "0",
        "0",
        "0.0000",
    )
    summary = (tmp_path / "runner/summary.md").read_text()
    assert "beta" in summary
    assert "alpha" in summary  # listed as not run, with its reason
    assert "unchanged since origin/main" in summary

    posts = [r for r in github.requests if r.method == "POST"]
    assert len(posts) == 1
    assert posts[0].path == "/repos/acme/prompts/issues/42/comments"
    assert posts[0].headers["authorization"] == f"Bearer {TOKEN}"
    assert "beta" in posts[0].body["body"]

    again, _ = _ci(tmp_path, work, github, "pull_request_synchronize")
    assert again.exit_code == 0, again.output
    assert [r.method for r in github.requests if r.method != "GET"] == ["POST", "PATCH"]
    assert len(github.comments[42]) == 1
    assert "cached" in github.comments[42][0]["body"]
    assert len(_history(origin, "beta")) == 1  # cached: nothing ran, nothing new recorded


def test_pull_request_without_the_label_runs_nothing_and_says_why(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    result, _ = _ci(tmp_path, work, github, "pull_request_unlabeled_pr")
    assert result.exit_code == 0, result.output
    assert "no `run-evals` label" in result.output
    assert not (work / ".trialbook/results/evals").exists()
    assert "Nothing ran" in (tmp_path / "runner/summary.md").read_text()
    assert github.requests == []
    assert "trialbook-results" not in git(origin, "branch", "--list")


def test_schedule_runs_what_moved_and_dispatch_force_runs_everything(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    nightly, _ = _ci(tmp_path, work, github, "schedule")
    assert nightly.exit_code == 0, nightly.output
    assert _history_files(origin) == ["history/alpha.jsonl", "history/beta.jsonl"]
    extra = _history(origin, "alpha")[0]["extra"]
    assert isinstance(extra, dict)
    assert {key: extra[key] for key in ("event", "ref", "vacuous")} == {
        "event": "schedule",
        "ref": "refs/heads/main",
        "vacuous": False,
    }

    quiet, _ = _ci(tmp_path, work, github, "schedule")
    assert quiet.exit_code == 0, quiet.output
    assert _outputs(tmp_path)["cached"] == "2"
    assert len(_history(origin, "alpha")) == 1

    forced, _ = _ci(tmp_path, work, github, "workflow_dispatch_force_string")
    assert forced.exit_code == 0, forced.output
    assert _outputs(tmp_path)["passed"] == "2"
    assert len(_history(origin, "alpha")) == 2
    assert github.requests == []  # no PR, no comment


def test_a_failing_eval_annotates_its_file_and_fails_the_step(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _ = workspace
    path = work / "evals/beta.eval.yaml"
    path.write_text(path.read_text().replace("file_exists: beta.txt", "file_exists: missing.txt"))
    git(work, "commit", "-q", "-am", "break beta")
    result, _ = _ci(tmp_path, work, github, "pull_request_labeled")
    assert result.exit_code == 1, result.output
    assert "::error file=evals/beta.eval.yaml" in result.output
    assert _outputs(tmp_path)["failed"] == "1"


@pytest.mark.parametrize("shard", ["x", "0/2", "3/2", "1/0", "1/2/3"])
def test_a_bad_shard_input_is_a_usage_error_not_a_traceback(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, shard: str
) -> None:
    work, _ = workspace
    result, _ = _ci(tmp_path, work, github, "pull_request_labeled", "--shard", shard)
    assert result.exit_code == 2, result.output
    assert "--shard" in result.output and "Traceback" not in result.output
    assert not (work / ".trialbook").exists()
