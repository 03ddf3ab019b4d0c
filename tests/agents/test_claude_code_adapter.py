"""The claude-code adapter before any trial: options, command line, availability, version."""

from __future__ import annotations

import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.agents._cli_trial import FAKE_KEY, make_trial
from tests.clis import ensure_cli, version_of
from trialbook.agents import Agent, AgentSpec
from trialbook.agents.claude_code import ClaudeCodeAgent, create
from trialbook.errors import ConfigError
from trialbook.evidence import JsonValue


def _agent(**options: JsonValue) -> ClaudeCodeAgent:
    return ClaudeCodeAgent(AgentSpec("claude-code", options, source="evals/x.yaml:3"))


@pytest.fixture(autouse=True)
def no_runner_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


def test_the_command_line_carries_model_turns_budget_and_extra_args(tmp_path: Path) -> None:
    agent = _agent(model="sonnet", max_turns=5, args=["--tools", "Bash"])
    trial = make_trial(tmp_path, max_cost_usd=0.25)
    argv = agent.argv(trial.task, Path("/bin/claude"))
    assert argv[:5] == ["/bin/claude", "-p", "--output-format", "stream-json", "--verbose"]
    assert "--bare" not in argv  # from 2.1.286 it loads no CLAUDE.md at all
    # The repository's own settings only, and no MCP server: isolation by documented switches.
    assert argv[5:12] == [
        "--permission-mode", "bypassPermissions", "--setting-sources", "project",
        "--strict-mcp-config", "--mcp-config", '{"mcpServers": {}}',
    ]  # fmt: skip
    assert argv[12:] == [
        "--model",
        "sonnet",
        "--max-turns",
        "5",
        "--max-budget-usd",
        "0.25",
        "--tools",
        "Bash",
        "--",
        trial.task.prompt,
    ]
    assert agent.model == "sonnet"
    assert agent.name == "claude-code"


def test_tiny_cost_caps_are_written_as_plain_decimals(tmp_path: Path) -> None:
    argv = _agent().argv(make_trial(tmp_path, max_cost_usd=0.00001).task, Path("/bin/claude"))
    assert argv[argv.index("--max-budget-usd") + 1] == "0.00001"
    argv = _agent().argv(make_trial(tmp_path / "b", max_cost_usd=2).task, Path("/bin/claude"))
    assert argv[argv.index("--max-budget-usd") + 1] == "2"


def test_defaults_leave_model_turns_and_budget_to_the_cli(tmp_path: Path) -> None:
    argv = _agent().argv(make_trial(tmp_path).task, Path("/bin/claude"))
    assert "--model" not in argv
    assert "--max-turns" not in argv
    assert "--max-budget-usd" not in argv
    assert _agent().model is None


def test_bad_options_fail_when_the_agent_is_made() -> None:
    with pytest.raises(
        ConfigError, match=re.escape("evals/x.yaml:3: agent 'claude-code': base_url: unknown option")
    ):
        _agent(base_url="http://127.0.0.1:1")
    with pytest.raises(ConfigError, match="max_turns: expected a whole number"):
        _agent(max_turns=-1)


def test_a_missing_binary_is_reported_before_any_trial(tmp_path: Path) -> None:
    availability = _agent(binary=str(tmp_path / "missing-claude")).available()
    assert not availability.ok
    assert availability.reason is not None
    assert availability.reason.startswith("claude-code: binary")
    assert _agent(binary=str(tmp_path / "missing-claude")).version() is None


@pytest.mark.asyncio
async def test_a_missing_binary_fails_the_trial_without_raising(tmp_path: Path) -> None:
    result = await _agent(binary=str(tmp_path / "missing-claude")).run(make_trial(tmp_path).task)
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert "missing-claude" in (result.error or "")
    assert result.usage == ()


@pytest.mark.real_cli
def test_without_a_key_the_reason_names_the_variable() -> None:
    availability = _agent(binary=str(ensure_cli("@anthropic-ai/claude-code"))).available()
    assert not availability.ok
    assert "ANTHROPIC_API_KEY" in (availability.reason or "")


@pytest.mark.real_cli
def test_an_empty_key_is_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "")
    availability = _agent(binary=str(ensure_cli("@anthropic-ai/claude-code"))).available()
    assert not availability.ok and "ANTHROPIC_API_KEY" in (availability.reason or "")


@pytest.mark.real_cli
def test_claude_auth_status_accepts_the_runner_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    agent = _agent(binary=str(ensure_cli("@anthropic-ai/claude-code")))
    assert agent.available().ok
    assert agent.version() == version_of("@anthropic-ai/claude-code")


@pytest.mark.real_cli
def test_a_key_in_the_agent_env_is_enough_even_as_a_template() -> None:
    agent = _agent(
        binary=str(ensure_cli("@anthropic-ai/claude-code")), env={"ANTHROPIC_API_KEY": "{{ secrets.KEY }}"}
    )
    assert agent.available().ok


def test_the_entry_point_builds_an_agent() -> None:
    (entry,) = [e for e in entry_points(group="trialbook.agents") if e.name == "claude-code"]
    assert entry.load() is create
    assert isinstance(create(AgentSpec("claude-code")), Agent)
