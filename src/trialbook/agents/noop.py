"""The ``noop`` agent: reads the prompt and does nothing at all.

It is the negative control of every eval: the eval's assertions are checked against a sandbox no
agent touched. An eval that passes with ``noop`` does not test what the prompt makes an agent do (an
eval whose only check is ``not_ran: rm`` passes for an agent that never started), so trialbook reports
it as ``vacuous``. It can also be named in an eval file like any agent, to see that for yourself.
"""

from __future__ import annotations

import time

from ..errors import ConfigError
from ..evidence import AgentResult
from ._local import LocalAgent, local_result
from ._protocol import Agent, AgentSpec, AgentTask

__all__ = ["NoopAgent", "create"]

_OPTIONS = frozenset({"env"})  # env is applied by the runner to the sandbox environment

FINAL_MESSAGE = "noop: did nothing (negative control)"


class NoopAgent(LocalAgent):
    """An agent that runs no command and changes no file; it costs nothing."""

    @property
    def name(self) -> str:
        """``noop``."""
        return "noop"

    async def run(self, task: AgentTask) -> AgentResult:
        """Return at once: a completed run with no tool call."""
        return local_result(
            agent_name=self.name,
            task=task,
            steps=[],
            final_message=FINAL_MESSAGE,
            success=True,
            stop_reason="completed",
            error=None,
            started=time.monotonic(),
        )


def create(spec: AgentSpec) -> Agent:
    """Build the noop agent; it takes no options but ``env``, and no model."""
    unknown = sorted(set(spec.options) - _OPTIONS)
    if unknown:
        raise ConfigError(
            f"{spec.source}: agent {spec.name!r}: {unknown[0]}: unknown option; the noop agent does "
            "nothing and takes only env"
        )
    return NoopAgent()
