"""Find agents by name: every adapter, built-in or third-party, comes from the ``trialbook.agents`` group.

Names are listed without importing anything, and each adapter is imported only when asked for, so one
adapter whose package is missing or broken costs only itself: the others keep working and the broken one
says why it cannot be used.
"""

from __future__ import annotations

import traceback
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ConfigError, UsageError
from . import script
from ._protocol import Agent, AgentFactory, AgentSpec

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "ENTRY_POINT_GROUP",
    "AgentNames",
    "RegisteredAgent",
    "create_agent",
    "known_agent_names",
    "registered_agents",
]

ENTRY_POINT_GROUP = "trialbook.agents"


@dataclass(frozen=True)
class RegisteredAgent:
    """One entry point of the group: its name, ``module:function`` target, and why it cannot load (if so)."""

    name: str
    target: str
    problem: str | None


def _entry_points() -> dict[str, EntryPoint]:
    # importlib.metadata costs tens of ms to import and scans every installed distribution: only a run
    # that names a registered agent (not a script agent) pays for it.
    from importlib.metadata import entry_points

    return {point.name: point for point in entry_points(group=ENTRY_POINT_GROUP)}


def known_agent_names() -> list[str]:
    """Every registered agent name, sorted; nothing is imported to list them."""
    return sorted(_entry_points())


class AgentNames(Collection[str]):
    """The registered agent names, looked up once, on first use, then kept for the whole run.

    A run checks names at several steps (loading evals, ``--agent``, planning); one lookup serves them
    all, and a run whose agents are all script agents never looks them up.
    """

    def __init__(self) -> None:
        self._names: list[str] | None = None

    def _loaded(self) -> list[str]:
        if self._names is None:
            self._names = known_agent_names()
        return self._names

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())


def _load(point: EntryPoint) -> AgentFactory:
    """Import the adapter's factory, turning any failure into a sentence naming the target."""
    try:
        factory = point.load()
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(exc)).strip()
        raise UsageError(f"agent {point.name!r} ({point.value}) cannot be loaded: {detail}") from exc
    if not callable(factory):
        raise UsageError(f"agent {point.name!r} ({point.value}) is not a function taking an AgentSpec")
    return factory  # type: ignore[no-any-return]


def registered_agents() -> list[RegisteredAgent]:
    """Every registered agent with the reason it cannot be loaded, for ``trialbook agents`` to show."""
    found = []
    for name, point in sorted(_entry_points().items()):
        try:
            _load(point)
        except UsageError as exc:
            found.append(RegisteredAgent(name, point.value, str(exc)))
        else:
            found.append(RegisteredAgent(name, point.value, None))
    return found


def create_agent(spec: AgentSpec) -> Agent:
    """Build the adapter for an eval file's agent entry.

    An entry with ``script`` (or ``python``, from :func:`script_agent`) is a script agent with that name;
    any other name must be registered. Raises ``ConfigError`` for an unknown name or bad options and
    ``UsageError`` for a registered adapter that cannot be loaded here.
    """
    if "script" in spec.options or "python" in spec.options:
        return script.create(spec)
    points = _entry_points()
    point = points.get(spec.name)
    if point is None:
        known = ", ".join(sorted(points)) or "none"
        raise ConfigError(
            f"{spec.source}: agent {spec.name!r}: unknown agent; known agents: {known} "
            "(or give it a script: to make it a script agent)"
        )
    try:
        factory = _load(point)
    except UsageError as exc:
        raise UsageError(f"{spec.source}: {exc}") from exc
    agent = factory(spec)
    if not isinstance(agent, Agent):
        raise UsageError(f"{spec.source}: agent {spec.name!r} ({point.value}) did not return an Agent")
    return agent
