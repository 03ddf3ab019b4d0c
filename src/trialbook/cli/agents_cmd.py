"""``trialbook agents``: which agents can run here, with their versions."""

from __future__ import annotations

import click

from ..agents import AgentSpec, create_agent, known_agent_names
from ..errors import TrialbookError

__all__ = ["agents_command"]


@click.command("agents")
def agents_command() -> None:
    """List the registered agents, whether each is available here (and if not, why), and its version."""
    for name in known_agent_names():
        try:
            agent = create_agent(AgentSpec(name, {}, "trialbook agents"))
            availability = agent.available()
            version = agent.version() if availability.ok else None
        except (TrialbookError, ImportError, OSError) as exc:
            click.echo(f"{name:<12} unavailable  {exc}")
            continue
        if availability.ok:
            click.echo(f"{name:<12} available    {version or 'version unknown'}")
        else:
            click.echo(f"{name:<12} unavailable  {availability.reason}")
