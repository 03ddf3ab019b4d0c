"""The checks between planning and the first trial: may agents run here, and can every trial start?

Everything is checked before anything starts, and every problem is reported at once, so a run never stops
halfway for a missing secret or an agent CLI that is not installed.
"""

from __future__ import annotations

from ..errors import RefusedRunError
from ..spec import check_secrets
from ._options import RunOptions
from ._plan import AgentPool, PlanEntry

__all__ = ["LOCAL_REFUSAL", "local_note", "refusals", "refuse_or_check"]


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


def refuse_or_check(options: RunOptions, runnable: list[PlanEntry], pool: AgentPool) -> None:
    """Refuse an unsafe local run; otherwise raise with every missing secret and unavailable agent."""
    if not options.in_ci and not options.unsafe_local:
        raise RefusedRunError(LOCAL_REFUSAL)
    problems = _start_problems(options, runnable, pool)
    if problems:
        raise RefusedRunError("cannot start the run:\n" + "\n".join(f"  {p}" for p in problems))


def _start_problems(options: RunOptions, runnable: list[PlanEntry], pool: AgentPool) -> list[str]:
    problems: list[str] = []
    seen_specs: set[str] = set()
    for entry in runnable:
        if entry.spec.id not in seen_specs:
            seen_specs.add(entry.spec.id)
            problems.extend(check_secrets(entry.spec, options.environ))
    checked: set[int] = set()
    for entry in runnable:
        agent = pool.get(entry.agent)
        if id(agent) in checked:
            continue
        checked.add(id(agent))
        availability = agent.available()
        if not availability.ok:
            problems.append(f"agent {entry.agent.name} ({entry.agent.source}): {availability.reason}")
    return problems
