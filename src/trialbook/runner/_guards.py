"""The checks between planning and the first trial: may agents run here, and can every trial start?

Everything is checked before anything starts, and every problem is reported at once, so a run never stops
halfway for a missing secret or an agent CLI that is not installed.
"""

from __future__ import annotations

import functools

from ..agents import AgentSpec
from ..errors import RefusedRunError
from ..evalfiles import check_secrets
from ._options import RunOptions
from ._plan import AgentPool, PlanEntry
from ._unavailable import UnavailableAgent

__all__ = ["LOCAL_REFUSAL", "local_note", "refusals", "refuse_or_check", "unavailable_notes"]


LOCAL_REFUSAL = (
    "refusing to run agents: they run with their permission prompts bypassed in a temporary folder, "
    "not a container. Set CI=true in CI, or pass --unsafe-local to accept that on this machine."
)


def refusals(options: RunOptions, runnable: list[PlanEntry], pool: AgentPool) -> list[str]:
    """Every problem that would stop the real run whatever the machine: ``--dry-run`` reports them.

    Running outside CI without ``--unsafe-local`` is not one of them: a dry run starts no agent, so it
    only notes that (see :func:`local_note`).
    """
    return _start_problems(options, runnable, pool)


def local_note(options: RunOptions, runnable: list[PlanEntry]) -> str | None:
    """What a dry run outside CI says about the real run's safety switch, or ``None`` in CI."""
    if runnable and not options.in_ci and not options.unsafe_local:
        return "the real run here needs CI=true or --unsafe-local (agents run with their prompts bypassed)"
    return None


def refuse_or_check(options: RunOptions, runnable: list[PlanEntry], pool: AgentPool) -> list[str]:
    """Refuse an unsafe local run, or one with a missing secret; returns a warning per unavailable agent.

    An agent that cannot run here stands in the pool as :class:`UnavailableAgent`, so its pairs end as
    errors naming the fix while the others run; with ``strict_agents`` it refuses the run instead.
    """
    if not options.in_ci and not options.unsafe_local:
        raise RefusedRunError(LOCAL_REFUSAL)
    secrets = _secret_problems(options, runnable)
    missing = _unavailable(runnable, pool)
    problems = [*secrets, *(text for _, text in missing)] if options.strict_agents else secrets
    if problems:
        raise RefusedRunError("cannot start the run:\n" + "\n".join(f"  {p}" for p in problems))
    others = sorted({e.agent.name for e in runnable} - {spec.name for spec, _ in missing})
    leave_out = f"; to run the others only, pass {' '.join(f'--agent {n}' for n in others)}" if others else ""
    warnings = []
    for spec, text in missing:
        reason = f"{text}{leave_out}"
        pool.stand_in(spec, functools.partial(UnavailableAgent, reason=reason))
        warnings.append(f"{text}: its pairs end as errors (--strict-agents refuses the run instead)")
    return warnings


def _secret_problems(options: RunOptions, runnable: list[PlanEntry]) -> list[str]:
    problems: list[str] = []
    seen_specs: set[str] = set()
    for entry in runnable:
        if entry.spec.id not in seen_specs:
            seen_specs.add(entry.spec.id)
            problems.extend(check_secrets(entry.spec, options.environ))
    return problems


def _unavailable(runnable: list[PlanEntry], pool: AgentPool) -> list[tuple[AgentSpec, str]]:
    """Each agent entry that cannot run here, once, with why (``agent NAME (where): reason``)."""
    found: list[tuple[AgentSpec, str]] = []
    checked: set[int] = set()
    for entry in runnable:
        agent = pool.get(entry.agent)
        if id(agent) in checked:
            continue
        checked.add(id(agent))
        availability = agent.available()
        if not availability.ok:
            found.append(
                (entry.agent, f"agent {entry.agent.name} ({entry.agent.source}): {availability.reason}")
            )
    return found


def _start_problems(options: RunOptions, runnable: list[PlanEntry], pool: AgentPool) -> list[str]:
    """What refuses the real run: missing secrets, and unavailable agents only under ``--strict-agents``."""
    missing = [text for _, text in _unavailable(runnable, pool)] if options.strict_agents else []
    return [*_secret_problems(options, runnable), *missing]


def unavailable_notes(options: RunOptions, runnable: list[PlanEntry], pool: AgentPool) -> list[str]:
    """What a dry run says of the agents that cannot run here but would not stop the real run."""
    if options.strict_agents:
        return []
    return [f"{text}: its pairs would end as errors" for _, text in _unavailable(runnable, pool)]
