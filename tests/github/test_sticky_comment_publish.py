"""The sticky comment through `trialbook publish`: its commit and time, its author, its header."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from trialbook.cli import cli
from trialbook.report.markdown import STICKY_MARKER

from ._actions import actions_environ
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import TOKEN, github, workspace

_ = (github, workspace)  # fixtures shared with the ci tests

HEAD = "2222222222222222222222222222222222222222"  # the fixture's pull_request.head.sha


def _run_then_publish(tmp_path: Path, work: Path, github: FakeGitHub, *publish_args: str) -> Result:
    common = {"GITHUB_WORKSPACE": str(work), "GITHUB_API_URL": github.url}
    without = actions_environ(tmp_path, "pull_request_labeled", **common)
    ran = CliRunner().invoke(cli, ["ci", "--stage", "run", "evals"], env=without, catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    with_token = actions_environ(tmp_path, "pull_request_labeled", **common, TRIALBOOK_GITHUB_TOKEN=TOKEN)
    return CliRunner().invoke(cli, ["publish", *publish_args], env=with_token, catch_exceptions=False)


def test_a_foreign_comment_with_the_marker_is_left_alone_and_ours_names_its_commit(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _origin = workspace
    planted = f"{STICKY_MARKER}\nall evals passed, merge away"
    foreign = github.add_comment(42, planted, user="mallory")
    published = _run_then_publish(tmp_path, work, github)
    assert published.exit_code == 0, published.output
    assert foreign["body"] == planted
    ours = [c for c in github.comments[42] if c is not foreign]
    assert [c["user"]["login"] for c in ours] == ["github-actions[bot]"]
    body = ours[0]["body"]
    assert body.splitlines()[:2] == [STICKY_MARKER, f"<!-- trialbook:head={HEAD} -->"]
    assert "Results for commit 2222222 · updated " in body and " UTC" in body


def test_a_comment_header_keeps_a_comment_of_its_own(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, _origin = workspace
    assert _run_then_publish(tmp_path, work, github).exit_code == 0
    named = _run_then_publish(tmp_path, work, github, "--comment-header", "nightly evals")
    assert named.exit_code == 0, named.output
    default, nightly = github.comments[42]
    assert default["body"].startswith(STICKY_MARKER)
    assert nightly["body"].startswith("<!-- trialbook:sticky:nightly evals -->\n")
    assert "## trialbook evals: nightly evals" in nightly["body"]
    assert "## trialbook evals: nightly evals" in (tmp_path / "runner/summary.md").read_text()

    bad = CliRunner().invoke(cli, ["publish", "--comment-header", "x-->y"], catch_exceptions=False)
    assert bad.exit_code == 2, bad.output
    assert "--comment-header" in bad.output and "comment-header` input" in bad.output
    assert "Traceback" not in bad.output
