"""A cached verdict is reported as the verdict it is, everywhere; the cache serves every ref's lines."""

from __future__ import annotations

from pathlib import Path

from ..runner.gitrepo import git
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import _ci, _history, _outputs, github, workspace

_ = (github, workspace)  # fixtures shared with the ci tests


def _break_beta(work: Path) -> None:
    path = work / "evals/beta.eval.yaml"
    path.write_text(path.read_text().replace("file_exists: beta.txt", "file_exists: missing.txt"))
    git(work, "commit", "-q", "-am", "break beta")


def test_a_cached_failure_fails_the_step_and_says_why_in_every_report(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    _break_beta(work)
    first, _ = _ci(tmp_path, work, github, "pull_request_labeled")
    assert first.exit_code == 1, first.output
    (line,) = _history(origin, "beta")
    extra = line["extra"]
    assert isinstance(extra, dict)
    reasons = extra["failures"]
    assert isinstance(reasons, list) and all(r.startswith("trial 1:") for r in reasons), reasons
    assert any("missing.txt" in reason for reason in reasons), reasons

    again, _ = _ci(tmp_path, work, github, "pull_request_synchronize")
    assert again.exit_code == 1, again.output
    assert not (work / ".trialbook/results/evals").exists()  # nothing ran: the verdict is the recorded one
    assert len(_history(origin, "beta")) == 1
    outputs = _outputs(tmp_path)
    assert (outputs["passed"], outputs["failed"], outputs["cached"], outputs["cost-usd"]) == (
        "0",
        "1",
        "1",
        "0.0000",
    )
    (annotation,) = [text for text in again.output.splitlines() if text.startswith("::error")]
    assert annotation.startswith("::error file=evals/beta.eval.yaml,title=beta × literal%3A fail::0/1")
    assert "cached: recorded" in annotation and "missing.txt" in annotation

    summary = (tmp_path / "runner/summary.md").read_text()
    assert "**1 failed (1 cached) · 1 skipped**" in summary
    assert "### What failed" in summary and "missing.txt" in summary
    body = github.comments[42][0]["body"]
    assert "**1 failed (1 cached) · 1 skipped**" in body
    assert "### What failed" in body and "missing.txt" in body
    assert body.count("beta × literal: 0/1 trials passed (cached: recorded ") == 1


def test_a_nightly_after_a_pull_request_run_on_the_same_content_runs_nothing_again(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub
) -> None:
    work, origin = workspace
    pr, _ = _ci(tmp_path, work, github, "pull_request_labeled")
    assert pr.exit_code == 0, pr.output
    nightly, _ = _ci(tmp_path, work, github, "schedule")
    assert nightly.exit_code == 0, nightly.output
    # beta ran on the PR; the nightly sees the same content and reuses that line. alpha never ran.
    assert [entry["extra"]["ref"] for entry in _history(origin, "beta")] == ["refs/pull/42/merge"]  # type: ignore[index]
    assert [entry["extra"]["ref"] for entry in _history(origin, "alpha")] == ["refs/heads/main"]  # type: ignore[index]
    outputs = _outputs(tmp_path)
    assert (outputs["passed"], outputs["failed"], outputs["cached"]) == ("2", "0", "1")
