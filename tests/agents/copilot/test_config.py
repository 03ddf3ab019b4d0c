"""Eval-file options for the copilot agent: checked before any trial, errors name file and option."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialbook.agents import AgentSpec
from trialbook.agents.copilot import CopilotAgent, CopilotEval, create, eval_from_spec, load_agent_file
from trialbook.errors import ConfigError


def test_options_become_a_copilot_eval(tmp_path: Path) -> None:
    (tmp_path / "reviewer.agent.md").write_text(
        "---\ndescription: Reviews code\ntools: [view]\n---\nYou review code.\n"
    )
    spec = AgentSpec(
        "copilot",
        {
            "model": "fake-model",
            "provider": {"type": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"},
            "tool_call_budget": 3,
            "timeout_s": "2m",
            "skill_directories": ["skills"],
            "custom_agents": ["reviewer.agent.md", {"name": "inline", "prompt": "Hi."}],
            "audit_requests": True,
            "env": {"EXTRA": "1"},
        },
        source=str(tmp_path / "demo.eval.yaml"),
    )
    config = eval_from_spec(spec)
    assert config.timeout_s == 120.0 and config.tool_call_budget == 3 and config.audit_requests
    assert config.skill_directories == (str(tmp_path / "skills"),)
    assert config.custom_agents[0] == {
        "description": "Reviews code",
        "tools": ["view"],
        "name": "reviewer",
        "prompt": "You review code.",
    }
    assert create(spec).model == "fake-model"


@pytest.mark.parametrize(
    ("options", "needle"),
    [
        ({"modle": "x"}, "'modle': unknown option"),
        ({"tool_call_budget": "3"}, "'tool_call_budget': expected a whole number"),
        ({"max_turns": 0}, "'max_turns': expected a whole number >= 1"),
        ({"timeout_s": "soon"}, "'timeout_s': expected a positive duration"),
        ({"provider": {"type": "bard", "base_url": "x"}}, "type must be one of"),
        ({"audit_requests": "yes"}, "'audit_requests': expected true or false"),
        ({"excluded_tools": "bash"}, "'excluded_tools': expected a list of strings"),
        ({"custom_agents": ["missing.agent.md"]}, "is not an existing .agent.md file"),
    ],
)
def test_bad_options_are_config_errors_naming_the_source(options: dict[str, object], needle: str) -> None:
    with pytest.raises(ConfigError) as caught:
        eval_from_spec(AgentSpec("copilot", options, source="evals/x.eval.yaml"))  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith("evals/x.eval.yaml: agent 'copilot' option")
    assert needle in message


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as caught:
        eval_from_spec(AgentSpec("copilot", {"a": 1, "b": 2}, source="e.eval.yaml"))
    assert len(caught.value.problems) == 2


def test_an_agent_file_without_front_matter_is_named_after_the_file(tmp_path: Path) -> None:
    path = tmp_path / "helper.agent.md"
    path.write_text("Just help.\n")
    assert load_agent_file(path) == {"name": "helper", "prompt": "Just help."}
    path.write_text("---\nshell: rm -rf /\n---\nx\n")
    with pytest.raises(ConfigError, match="unknown front matter key"):
        load_agent_file(path)


def test_python_defaults_are_plain() -> None:
    config = CopilotEval()
    assert config.name == "copilot" and config.tools == () and config.available_tools is None


def test_a_custom_agents_path_that_is_not_an_agent_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hi")
    with pytest.raises(ConfigError, match=r"is not an existing \.agent\.md file"):
        CopilotEval(custom_agents=(str(tmp_path / "notes.md"),))
    with pytest.raises(ConfigError, match=r"is not an existing \.agent\.md file"):
        CopilotEval(custom_agents=(tmp_path / "missing.agent.md",))


@pytest.mark.parametrize("reserved", ["session_id", "on_event", "on_permission_request", "hooks"])
def test_extra_config_cannot_replace_what_the_evidence_depends_on(reserved: str) -> None:
    with pytest.raises(ConfigError, match=rf"{reserved} cannot be overridden"):
        CopilotEval(extra_config={reserved: None})


def test_the_supplied_system_prompt_is_instructions_then_personas_or_the_override() -> None:
    assert CopilotEval().system_prompt() is None
    assert CopilotEval(personas=("A.", "", "B.")).system_prompt() == "A.\n\nB."
    assert CopilotEval(instructions="I.", personas=("A.",)).system_prompt() == "I.\n\nA."
    override = {"system_message": {"mode": "replace", "content": "Only this."}}
    replaced = CopilotEval(instructions="I.", personas=("A.",), extra_config=override)
    assert replaced.system_prompt() == "Only this."


@pytest.mark.asyncio
async def test_a_trial_that_stops_before_the_snapshot_has_neither_snapshot_nor_supplied_prompt(
    tmp_path: Path,
) -> None:
    config = CopilotEval(instructions="I.", personas=("A.",), cli_path=str(tmp_path / "no-copilot"))
    result = await CopilotAgent(config, environ={}).run_prompt("hi", workdir=tmp_path)
    assert (result.success, result.stop_reason) == (False, "execution_error")
    assert result.configuration is None and result.effective_system_prompt is None
