"""The codex adapter before any trial: options, command line, availability, version."""

from __future__ import annotations

import json
import re
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.agents._cli_trial import make_trial
from tests.clis import ensure_cli
from trialbook.agents import Agent, AgentSpec
from trialbook.agents.codex import CodexAgent, create
from trialbook.errors import ConfigError
from trialbook.evidence import JsonValue


def _agent(**options: JsonValue) -> CodexAgent:
    return CodexAgent(AgentSpec("codex", options, source="evals/x.yaml:3"))


@pytest.fixture(autouse=True)
def no_runner_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEX_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def test_the_command_line_isolates_codex_and_points_it_at_the_endpoint(tmp_path: Path) -> None:
    url = 'http://127.0.0.1:8080/v1?q="x"'
    agent = _agent(model="gpt-5.5", base_url=url, args=["--ephemeral"])
    trial = make_trial(tmp_path)
    argv = agent.argv(trial.task, Path("/bin/codex"))
    assert argv[:5] == [
        "/bin/codex",
        "exec",
        "--json",
        "--dangerously-bypass-approvals-and-sandbox",
        "--skip-git-repo-check",
    ]
    assert argv[5:7] == ["-C", str(trial.task.workdir)]
    settings = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
    assert "allow_login_shell=false" in settings
    assert "analytics.enabled=false" in settings
    assert f"openai_base_url={json.dumps(url)}" in settings
    assert argv[argv.index("-m") + 1] == "gpt-5.5"
    assert argv[-3:] == ["--ephemeral", "--", trial.task.prompt]


def test_codex_has_no_turn_limit_option() -> None:
    with pytest.raises(
        ConfigError,
        match=re.escape(
            "agent 'codex': max_turns: unknown option; codex accepts args, audit_requests, base_url"
        ),
    ):
        _agent(max_turns=3)


def test_a_missing_binary_is_reported_before_any_trial(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    availability = _agent().available()
    assert not availability.ok
    assert "npm install -g @openai/codex" in (availability.reason or "")


@pytest.mark.real_cli
def test_a_key_variable_or_an_endpoint_is_needed() -> None:
    binary = str(ensure_cli("@openai/codex"))
    missing = _agent(binary=binary).available()
    assert not missing.ok
    assert "CODEX_API_KEY" in (missing.reason or "")
    assert _agent(binary=binary, env={"OPENAI_API_KEY": "{{ secrets.OPENAI }}"}).available().ok
    assert _agent(binary=binary, base_url="http://127.0.0.1:9/v1").available().ok


@pytest.mark.real_cli
def test_an_empty_runner_key_is_a_missing_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_API_KEY", "")
    monkeypatch.setenv("OPENAI_API_KEY", "")
    missing = _agent(binary=str(ensure_cli("@openai/codex"))).available()
    assert not missing.ok and "CODEX_API_KEY" in (missing.reason or "")


@pytest.mark.real_cli
def test_a_runner_key_makes_it_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_API_KEY", "sk-fake-runner")
    agent = _agent(binary=str(ensure_cli("@openai/codex")))
    assert agent.available().ok
    assert agent.version() == "0.171.0"


def test_the_entry_point_builds_an_agent() -> None:
    (entry,) = [e for e in entry_points(group="trialbook.agents") if e.name == "codex"]
    assert entry.load() is create
    assert isinstance(create(AgentSpec("codex")), Agent)
