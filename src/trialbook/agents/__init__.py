"""Agent adapters: one protocol, a registry fed by the ``trialbook.agents`` entry-point group."""

from ._protocol import Agent, AgentFactory, AgentSpec, AgentTask, Availability

__all__ = ["Agent", "AgentFactory", "AgentSpec", "AgentTask", "Availability"]
