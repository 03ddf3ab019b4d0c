"""Which isolation each pair runs under: the eval's ``sandbox.isolation`` or ``--isolation``, resolved here.

A backend runs where it can run here (its ``problem()``) and the agent starts its processes through
trialbook (``SUPPORTS_ISOLATION``). ``auto`` becomes the first registered backend that can, else ``none``
with one line saying why the first cannot; a backend asked for by name that cannot refuses the run (exit
2) with the fix.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import RefusedRunError
from ..sandbox import ISOLATION_BACKENDS, ISOLATIONS
from ._options import RunOptions
from ._plan import AgentPool, PlanEntry

__all__ = ["resolve_isolation"]


def _network(entry: PlanEntry, pool: AgentPool) -> str:
    """The eval's ``sandbox.network``, else the agent's own default (``none`` for local agents)."""
    default = getattr(pool.get(entry.agent), "DEFAULT_NETWORK", "host")
    return entry.spec.network or str(default)


def _choose(asked: str, entry: PlanEntry, pool: AgentPool) -> tuple[str, str | None]:
    """The backend ``asked`` names (for ``auto`` the first that can run), or ``none`` and why not."""
    if not getattr(pool.get(entry.agent), "SUPPORTS_ISOLATION", False):
        return "none", f"agent {entry.agent.name} starts its processes itself, outside trialbook's isolation"
    if asked != "auto" and asked not in ISOLATION_BACKENDS:
        return "none", f"there is no isolation {asked!r} (choose from {', '.join(ISOLATIONS)})"
    first: str | None = None
    for name in ISOLATION_BACKENDS if asked == "auto" else [asked]:
        problem = ISOLATION_BACKENDS[name](hide=(), network=_network(entry, pool)).problem()
        if problem is None:
            return name, None
        first = first or problem
    return "none", first


def resolve_isolation(
    options: RunOptions, plan: list[PlanEntry], pool: AgentPool
) -> tuple[list[PlanEntry], list[str]]:
    """The plan with each runnable entry's isolation decided, and a warning per ``auto`` that fell back.

    Raises:
        RefusedRunError: a backend asked for by name cannot run here, naming the eval and the fix.
    """
    decided: list[PlanEntry] = []
    warnings: dict[str, str] = {}
    refusals: list[str] = []
    for entry in plan:
        asked = options.isolation or entry.spec.isolation
        if entry.action != "run" or asked == "none":
            decided.append(entry)
            continue
        name, problem = _choose(asked, entry, pool)
        if problem is None:
            decided.append(replace(entry, isolation=name, network=_network(entry, pool)))
            continue
        where = (
            f"--isolation {asked}"
            if options.isolation
            else f"sandbox.isolation: {asked} ({entry.spec.source})"
        )
        if asked == "auto":
            warnings.setdefault(problem, f"isolation auto: {problem}; trials run without isolation")
        else:
            refusals.append(f"{where}: {problem}")
        decided.append(entry)
    if refusals:
        raise RefusedRunError(
            "cannot isolate the trials:\n" + "\n".join(f"  {r}" for r in dict.fromkeys(refusals))
        )
    return decided, list(warnings.values())
