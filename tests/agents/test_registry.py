from pathlib import Path

import pytest

from trialbook.agents import (
    AgentSpec,
    ScriptAgent,
    create_agent,
    known_agent_names,
    registered_agents,
)
from trialbook.agents.literal import LiteralAgent
from trialbook.errors import ConfigError, UsageError

CREATED: list[AgentSpec] = []


def create_fake(spec: AgentSpec) -> ScriptAgent:
    """A third-party adapter factory, loaded through its entry point."""
    CREATED.append(spec)
    return ScriptAgent(spec.name, "echo from plugin")


def not_an_agent(spec: AgentSpec) -> str:
    return "nope"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Install a distribution that registers three agents, one good and two broken, on sys.path."""
    info = tmp_path / "trialbook_fake_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: trialbook-fake-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[trialbook.agents]\n"
        "fake-ok = tests.agents.test_registry:create_fake\n"
        "fake-missing = trialbook_no_such_package.adapter:create\n"
        "fake-wrong = tests.agents.test_registry:not_an_agent\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))


def test_built_ins_are_registered_like_plugins() -> None:
    names = known_agent_names()
    assert {"literal", "copilot", "claude-code", "codex"} <= set(names)
    assert names == sorted(names)
    assert isinstance(create_agent(AgentSpec("literal")), LiteralAgent)


def test_a_plugin_agent_is_created_through_its_entry_point(plugin: None) -> None:
    assert {"fake-ok", "fake-missing", "fake-wrong"} <= set(known_agent_names())
    spec = AgentSpec("fake-ok", {"anything": 1})
    agent = create_agent(spec)
    assert agent.name == "fake-ok"
    assert CREATED[-1] is spec


def test_a_broken_plugin_says_why_and_spares_the_others(plugin: None) -> None:
    status = {agent.name: agent for agent in registered_agents()}
    assert status["fake-ok"].problem is None
    assert status["literal"].problem is None
    missing = status["fake-missing"]
    assert missing.target == "trialbook_no_such_package.adapter:create"
    assert missing.problem is not None
    assert "No module named 'trialbook_no_such_package'" in missing.problem
    with pytest.raises(UsageError, match=r"^evals/a\.eval\.yaml:2: agent 'fake-missing' .* cannot be loaded"):
        create_agent(AgentSpec("fake-missing", source="evals/a.eval.yaml:2"))
    with pytest.raises(UsageError, match="did not return an Agent"):
        create_agent(AgentSpec("fake-wrong"))
    assert isinstance(create_agent(AgentSpec("literal")), LiteralAgent)


def test_unknown_agent_names_the_source_and_the_known_names() -> None:
    with pytest.raises(ConfigError) as info:
        create_agent(AgentSpec("gpt-pilot", source="evals/setup.eval.yaml:5"))
    message = str(info.value)
    assert message.startswith("evals/setup.eval.yaml:5: agent 'gpt-pilot': unknown agent; known agents: ")
    assert "claude-code, codex, copilot" in message
    assert "literal" in message
    assert "script:" in message


def test_a_script_entry_is_a_script_agent_whatever_its_name() -> None:
    agent = create_agent(AgentSpec("literal", {"script": "echo hi"}))
    assert isinstance(agent, ScriptAgent)
    assert agent.name == "literal"
