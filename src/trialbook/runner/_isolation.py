"""Which isolation each pair runs under: the eval's ``sandbox.isolation`` or ``--isolation``, resolved here.

``auto`` becomes ``bwrap`` where bubblewrap works and the agent starts its processes through trialbook
(every built-in adapter but ``copilot``, whose SDK starts its CLI itself), else ``none`` with one line
saying why. ``bwrap`` asked for where it cannot run refuses the run (exit 2) with the fix.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import RefusedRunError
from ..sandbox import bwrap_problem, inside_python
from ._options import RunOptions
from ._plan import AgentPool, PlanEntry

__all__ = ["resolve_isolation"]


def _problem(entry: PlanEntry, pool: AgentPool) -> str | None:
    agent = pool.get(entry.agent)
    if not getattr(agent, "SUPPORTS_ISOLATION", False):
        return f"agent {entry.agent.name} starts its processes itself, outside trialbook's isolation"
    problem = bwrap_problem()
    if problem is None and _network(entry, pool) == "model" and inside_python() is None:
        return (
            "network: model needs the system's Python (/usr/bin/python3) and a user namespace of the "
            "trial's own to reach the model endpoint from inside the sandbox"
        )
    return problem


def _network(entry: PlanEntry, pool: AgentPool) -> str:
    """The eval's ``sandbox.network``, else the agent's own default (``none`` for local agents)."""
    default = getattr(pool.get(entry.agent), "DEFAULT_NETWORK", "host")
    return entry.spec.network or str(default)


def resolve_isolation(
    options: RunOptions, plan: list[PlanEntry], pool: AgentPool
) -> tuple[list[PlanEntry], list[str]]:
    """The plan with each runnable entry's isolation decided, and a warning per ``auto`` that fell back.

    Raises:
        RefusedRunError: ``bwrap`` asked for where it cannot run, naming the eval and the fix.
    """
    decided: list[PlanEntry] = []
    warnings: dict[str, str] = {}
    refusals: list[str] = []
    for entry in plan:
        asked = options.isolation or entry.spec.isolation
        if entry.action != "run" or asked == "none":
            decided.append(entry)
            continue
        problem = _problem(entry, pool)
        if problem is None:
            decided.append(replace(entry, isolation="bwrap", network=_network(entry, pool)))
            continue
        where = (
            "--isolation bwrap" if options.isolation else f"sandbox.isolation: bwrap ({entry.spec.source})"
        )
        if asked == "bwrap":
            refusals.append(f"{where}: {problem}")
        else:
            warnings.setdefault(problem, f"isolation auto: {problem}; trials run without isolation")
        decided.append(entry)
    if refusals:
        raise RefusedRunError(
            "cannot isolate the trials:\n" + "\n".join(f"  {r}" for r in dict.fromkeys(refusals))
        )
    return decided, list(warnings.values())
