"""Agent adapters: one protocol, a registry fed by the ``trialbook.agents`` entry-point group."""

from ._protocol import Agent, AgentFactory, AgentSpec, AgentTask, Availability
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
    "ENTRY_POINT_GROUP",
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
