"""An agent that cannot run here: its pairs end as errors with the fix, and the other agents still run.

A run of ``literal`` and ``claude-code`` evals on a machine without ``claude`` used to stop before any
trial, so a new user's literal evals never ran either. Now each trial of the missing agent's pairs ends at
once as an ``execution_error`` naming why and how to fix it (install it, or leave it out with ``--agent``),
the verdict of those pairs is ``error`` and the run exits 1; ``--strict-agents`` keeps the old refusal.
"""

from __future__ import annotations

from typing import Any

from ..agents import Agent, AgentTask, Availability
from ..evidence import AgentResult, Turn

__all__ = ["UnavailableAgent"]


class UnavailableAgent:
    """Stands in for ``inner``: the same name, version and model, and trials that end with ``reason``."""

    def __init__(self, inner: Agent, reason: str) -> None:
        self._inner = inner
        self.reason = reason

    @property
    def name(self) -> str:
        """The stood-in agent's name."""
        return self._inner.name

    @property
    def model(self) -> str | None:
        """The stood-in agent's model."""
        return self._inner.model

    def available(self) -> Availability:
        """Never: that is why it stands in."""
        return Availability(False, self.reason)

    def version(self) -> str | None:
        """The stood-in agent's version, when it can tell one."""
        return self._inner.version()

    async def run(self, task: AgentTask) -> AgentResult:
        """End the trial at once with the reason; nothing is started."""
        return AgentResult(
            agent_name=self._inner.name,
            agent_version=None,
            success=False,
            error=self.reason,
            stop_reason="execution_error",
            turns=(Turn("user", task.prompt),),
            working_directory=str(task.workdir),
        )

    async def aclose(self) -> None:
        """Close the stood-in adapter."""
        await self._inner.aclose()

    def __getattr__(self, name: str) -> Any:
        # Optional adapter attributes (SKILLS_FOLDER, ...) stay the stood-in agent's.
        return getattr(self._inner, name)
