"""Agent adapters: one protocol, a registry fed by the ``trialbook.agents`` entry-point group."""

from ._fences import MAY_FAIL
from ._protocol import Agent, AgentFactory, AgentSpec, AgentTask, Availability
from ._provider_names import CLAUDE_PASSTHROUGH, CODEX_PASSTHROUGH, COPILOT_VARIABLES
from ._registry import (
    ENTRY_POINT_GROUP,
    AgentNames,
    RegisteredAgent,
    create_agent,
    known_agent_names,
    registered_agents,
)
from .script import ScriptAgent, ScriptFunction, script_agent

__all__ = [
    "CLAUDE_PASSTHROUGH",
    "CODEX_PASSTHROUGH",
    "COPILOT_VARIABLES",
    "ENTRY_POINT_GROUP",
    "MAY_FAIL",
    "Agent",
    "AgentFactory",
    "AgentNames",
    "AgentSpec",
    "AgentTask",
    "Availability",
    "RegisteredAgent",
    "ScriptAgent",
    "ScriptFunction",
    "create_agent",
    "known_agent_names",
    "registered_agents",
    "script_agent",
]
