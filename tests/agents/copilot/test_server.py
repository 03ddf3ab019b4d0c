"""What reaches the CLI's environment, how availability is explained and how the version is probed."""

from __future__ import annotations

import os
from pathlib import Path

from trialbook.agents import AgentSpec
from trialbook.agents.copilot import create
from trialbook.agents.copilot._server import availability, cli_environment, cli_version
from trialbook.evidence import JsonValue


def test_only_documented_variables_pass_from_the_runner(tmp_path: Path) -> None:
    runner = {
        "COPILOT_GITHUB_TOKEN": "copilot-token",
        "GH_TOKEN": "a-workflow-write-token",
        "GITHUB_TOKEN": "another-workflow-write-token",
        "AWS_SECRET_ACCESS_KEY": "no",
        "PATH": "/runner/bin",
        "COPILOT_CLI_PATH": "/x",
    }
    task_env = {"PATH": "/sandbox/shims:/usr/bin:/bin", "HOME": str(tmp_path / "home")}
    env = cli_environment(task_env, tmp_path / "home", "/cli/copilot", runner)
    assert env["COPILOT_GITHUB_TOKEN"] == "copilot-token" and "AWS_SECRET_ACCESS_KEY" not in env
    # A job-level GH_TOKEN / GITHUB_TOKEN is usually the workflow's write token: never handed over.
    assert "GH_TOKEN" not in env and "GITHUB_TOKEN" not in env
    assert env["PATH"].split(":")[0] == "/sandbox/shims"  # standard dirs are appended, never prepended
    assert "/usr/local/bin" in env["PATH"].split(":")[3:]
    assert env["COPILOT_CLI_PATH"] == "/cli/copilot" and env["COPILOT_SKIP_CLI_DOWNLOAD"] == "1"
    assert env["COPILOT_HOME"] == str(tmp_path / "home" / ".copilot")
    assert env["COPILOT_PKG_CACHE_HOME"].endswith("trialbook/copilot")


def test_availability_says_what_is_missing(tmp_path: Path) -> None:
    assert "COPILOT_CLI_PATH" in (availability(None, True, {}).reason or "")
    assert "does not exist" in (availability(str(tmp_path / "nope"), True, {}).reason or "")
    binary = tmp_path / "copilot"
    binary.write_text("#!/bin/sh\n")
    assert "not executable" in (availability(str(binary), True, {}).reason or "")
    binary.chmod(0o755)
    assert "no credentials" in (availability(str(binary), False, {}).reason or "")
    assert availability(str(binary), False, {"COPILOT_GITHUB_TOKEN": "t"}).ok
    assert availability(str(binary), True, {}).ok


def test_a_workflow_token_or_an_empty_one_is_no_credential(tmp_path: Path) -> None:
    binary = tmp_path / "copilot"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    for runner in ({"GH_TOKEN": "t"}, {"GITHUB_TOKEN": "t"}, {"COPILOT_GITHUB_TOKEN": ""}):
        check = availability(str(binary), False, runner)
        assert not check.ok and "COPILOT_GITHUB_TOKEN" in (check.reason or "")
    # An empty runner token is not passed on either, so it cannot shadow nothing with nothing.
    env = cli_environment({}, tmp_path / "home", str(binary), {"COPILOT_GITHUB_TOKEN": ""})
    assert "COPILOT_GITHUB_TOKEN" not in env


def test_a_token_the_eval_declares_counts_and_reaches_the_cli(tmp_path: Path) -> None:
    binary = tmp_path / "copilot"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    declared: dict[str, JsonValue] = {"GH_TOKEN": "{{ secrets.GH_TOKEN }}"}
    assert availability(str(binary), False, {}, {"GH_TOKEN": "{{ secrets.GH_TOKEN }}"}).ok
    agent = create(AgentSpec("copilot", {"env": declared, "cli_path": str(binary)}))
    assert agent.available().ok
    env = cli_environment({"GH_TOKEN": "rendered"}, tmp_path / "home", str(binary), {"GH_TOKEN": "runner"})
    assert env["GH_TOKEN"] == "rendered"


def test_version_is_probed_once_per_binary_state(tmp_path: Path) -> None:
    counter = tmp_path / "calls"
    binary = tmp_path / "copilot"
    binary.write_text(f'#!/bin/sh\necho x >> "{counter}"\necho "GitHub Copilot CLI 9.8.7."\n')
    binary.chmod(0o755)
    assert cli_version(str(binary)) == "9.8.7"
    assert cli_version(str(binary)) == "9.8.7"
    assert counter.read_text().count("x") == 1
    binary.write_text(f'#!/bin/sh\necho x >> "{counter}"\necho "GitHub Copilot CLI 9.8.10."\n')
    os.utime(binary, (1, 1))
    assert cli_version(str(binary)) == "9.8.10"
