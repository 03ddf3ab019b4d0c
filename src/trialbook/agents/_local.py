"""What the agents that call no model (literal, script) share: adapter basics and local-step evidence.

Both run commands on this machine and describe each as a ``bash`` (or ``python``) tool call, so their
results read like any other agent's: a user turn, one assistant turn per tool call, a closing message.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import ClassVar

from .. import __version__
from ..evidence import AgentResult, JsonValue, StopReason, ToolCall, Turn
from ._excerpt import excerpt
from ._protocol import AgentTask, Availability

__all__ = ["LocalAgent", "LocalStep", "local_result"]


class LocalAgent:
    """What local agents share: no model, always available, versioned with trialbook, nothing to close."""

    SUPPORTS_ISOLATION: ClassVar[bool] = True
    """Its processes start through ``run_process`` with the task's isolation (docs/isolation.md)."""
    DEFAULT_NETWORK: ClassVar[str] = "none"
    """Under isolation, unless the eval says otherwise: a local agent has no model to reach."""

    @property
    def model(self) -> None:
        """A local agent calls no model."""
        return None

    def available(self) -> Availability:
        """Always available: these agents need only bash, which the sandbox needs too."""
        return Availability(ok=True)

    def version(self) -> str:
        """A local agent changes only with trialbook itself."""
        return __version__

    async def aclose(self) -> None:
        """Nothing is shared across trials."""


@dataclass(frozen=True)
class LocalStep:
    """One command that ran: ``exit_code`` is ``None`` when it was killed at the deadline.

    ``stored_in`` names the file of the trial folder that keeps ``output`` whole (``script.log``,
    ``literal/step-N.out``); the evidence then carries an :func:`~._excerpt.excerpt` of it, so a long
    output is stored once. Without a file the output is the evidence's own and is kept whole.
    """

    call_id: str
    tool: str
    arguments: JsonValue
    output: str
    exit_code: int | None
    error: str | None = None
    stored_in: str | None = None

    def tool_call(self) -> ToolCall:
        """The step as evidence; a killed step completed (it was stopped) without succeeding."""
        failed = self.exit_code != 0 or self.error is not None
        error = self.error
        if error is None and self.exit_code not in (0, None):
            error = f"exit code {self.exit_code}"
        return ToolCall(
            call_id=self.call_id,
            name=self.tool,
            arguments=self.arguments,
            completion_received=True,
            success=not failed,
            result=self.output if self.stored_in is None else excerpt(self.output, self.stored_in),
            error=error,
        )


def local_result(
    *,
    agent_name: str,
    task: AgentTask,
    steps: list[LocalStep],
    final_message: str | None,
    success: bool,
    stop_reason: StopReason,
    error: str | None,
    started: float,
) -> AgentResult:
    """The evidence of a local run; it costs nothing (``0.0``) and uses no tokens (no usage entries)."""
    turns = [Turn(role="user", content=task.prompt)]
    turns.extend(Turn(role="assistant", content=None, tool_call_ids=(step.call_id,)) for step in steps)
    if final_message is not None:
        turns.append(Turn(role="assistant", content=final_message))
    return AgentResult(
        agent_name=agent_name,
        agent_version=__version__,
        success=success,
        error=error,
        stop_reason=stop_reason,
        turns=tuple(turns),
        all_tool_calls=tuple(step.tool_call() for step in steps),
        usage=(),
        cost_usd=0.0,
        model_used=None,
        duration_ms=(time.monotonic() - started) * 1000,
        working_directory=str(task.workdir),
    )
