"""``trialbook agents``: which agents can run here, with their versions."""

from __future__ import annotations

import click

from ..agents import AgentSpec, create_agent, known_agent_names
from ..errors import TrialbookError
from ..evidence import JsonObject
from ._json import document, echo_json

__all__ = ["agents_command"]


def _probe(name: str) -> JsonObject:
    try:
        agent = create_agent(AgentSpec(name, {}, "trialbook agents"))
        availability = agent.available()
        version = agent.version() if availability.ok else None
    except (TrialbookError, ImportError, OSError) as exc:
        return {"name": name, "available": False, "version": None, "reason": str(exc)}
    reason = None if availability.ok else availability.reason
    return {"name": name, "available": availability.ok, "version": version, "reason": reason}


@click.command("agents")
@click.option(
    "--json", "as_json", is_flag=True, help="Print the agents as JSON (docs/schemas/agents.schema.json)."
)
def agents_command(as_json: bool) -> None:
    """List the registered agents, whether each is available here (and if not, why), and its version."""
    probes = [_probe(name) for name in known_agent_names()]
    if as_json:
        echo_json(document("agents", agents=list(probes)))
        return
    for probe in probes:
        if probe["available"]:
            click.echo(f"{probe['name']:<12} available    {probe['version'] or 'version unknown'}")
        else:
            click.echo(f"{probe['name']:<12} unavailable  {probe['reason']}")
