"""A run step a signal stops hands over 128 + signal in ci.json; publish exits with it and says so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from trialbook.cli import cli
from trialbook.github import _ci
from trialbook.runner import RunReport, run

from ..runner.conftest import write
from ..runner.gitrepo import commit_all
from ._actions import actions_environ
from ._fake_api import FakeGitHub
from .test_ci_end_to_end import TOKEN, github, workspace

_ = (github, workspace)  # fixtures shared with the ci tests

TRIALBOOK = Path(sys.executable).with_name("trialbook")


def _publish(tmp_path: Path, work: Path, github: FakeGitHub, results: Path) -> tuple[int, str, str]:
    environ = actions_environ(
        tmp_path,
        "schedule",
        GITHUB_WORKSPACE=str(work),
        GITHUB_API_URL=github.url,
        TRIALBOOK_GITHUB_TOKEN=TOKEN,
    )
    (tmp_path / "runner/summary.md").write_text("")
    published = CliRunner().invoke(cli, ["publish", str(results)], env=environ, catch_exceptions=False)
    return published.exit_code, published.output, (tmp_path / "runner/summary.md").read_text()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_run_is_the_exit_code_of_the_run_and_the_publish_step(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, signum: int
) -> None:
    work, _origin = workspace
    marker = tmp_path / "slow-started"
    # The sandbox passes on only declared variables, so the marker's path is written into the guide.
    write(
        work / "evals/slow.eval.yaml",
        f"prompt_text: |\n  ```bash\n  touch {marker}\n  sleep 60\n  ```\nagents: [literal]\n",
    )
    commit_all(work, "a slow eval")
    results = work / ".trialbook/results"
    environ = actions_environ(tmp_path, "schedule", GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url)
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "TRIALBOOK_"))},
        **environ,
    }
    process = subprocess.Popen(
        [str(TRIALBOOK), "ci", "--stage", "run", "--results-dir", str(results), "evals"],
        cwd=work, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the slow step never started"
            time.sleep(0.1)
        process.send_signal(signum)
        out, err = process.communicate(timeout=90)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 128 + signum, out.decode() + err.decode()
    state = json.loads((results / "ci.json").read_text())
    assert state["exit_code"] == 128 + signum

    code, output, summary = _publish(tmp_path, work, github, results)
    name = signal.Signals(signum).name
    assert code == 128 + signum, output
    assert f"::error::The run was cancelled by {name} (exit code {128 + signum})" in output
    assert f"> [!CAUTION]\n> The run was cancelled by {name}" in summary
    assert "not finished: run cancelled" in summary


def test_a_signal_after_the_trials_still_reaches_ci_json(
    tmp_path: Path, workspace: tuple[Path, Path], github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, _origin = workspace

    def run_then_signalled(*args: object, **kwargs: object) -> RunReport:
        report = run(*args, **kwargs)  # type: ignore[arg-type]
        os.kill(os.getpid(), signal.SIGTERM)  # the trials are done; the hand-over is not written yet
        return report

    monkeypatch.setattr(_ci, "run", run_then_signalled)
    environ = actions_environ(tmp_path, "schedule", GITHUB_WORKSPACE=str(work), GITHUB_API_URL=github.url)
    ran = CliRunner().invoke(cli, ["ci", "--stage", "run", "evals"], env=environ, catch_exceptions=False)
    assert ran.exit_code == 143, ran.output
    results = work / ".trialbook/results"
    assert json.loads((results / "ci.json").read_text())["exit_code"] == 143
    code, output, summary = _publish(tmp_path, work, github, results)
    assert code == 143, output
    assert (
        "::error::The run was cancelled by SIGTERM" in output
        and "The run was cancelled by SIGTERM" in summary
    )
    assert "**2 passed**" in summary  # what finished is still reported
