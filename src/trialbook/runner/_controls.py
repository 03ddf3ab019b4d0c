"""Negative controls: is an eval's verdict something only an agent's work can earn?

Each eval with a trial to run gets one trial of the built-in ``noop`` agent, which does nothing, and the
eval's assertions are checked on that untouched sandbox. If they all hold, the eval is ``vacuous``: it
passes whatever the agent does. The outcome is kept in history with the control's own cache key (on
every line of the eval recorded in that run), so the control runs once per key, not once per run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..history import HistoryStore, parse_started_at
from ._engine import ControlOutcome, EntryResult
from ._plan import AgentPool, PlanEntry, control_entry

__all__ = ["apply_controls", "plan_controls"]


def plan_controls(
    plan: Sequence[PlanEntry], pool: AgentPool, store: HistoryStore | None, *, force: bool
) -> tuple[list[PlanEntry], dict[str, ControlOutcome]]:
    """The controls to run, and the outcomes history already holds for their keys, by eval id.

    Evals with nothing to run need no control (their verdicts come from history), nor those that set
    ``negative_control: false``, nor those without assertions: they check only that the agent finishes
    without an error, which says nothing about a sandbox and which the noop agent always does.
    ``force`` re-runs known controls too.
    """
    to_run: list[PlanEntry] = []
    known: dict[str, ControlOutcome] = {}
    for entry in plan:
        eval_id = entry.spec.id
        spec = entry.spec
        if entry.action != "run" or not spec.negative_control or not spec.assertions or eval_id in known:
            continue
        if any(c.spec.id == eval_id for c in to_run):
            continue
        control = control_entry(entry, pool)
        assert control.cache_key is not None
        found = None if force or store is None else _known(store, eval_id, control.cache_key)
        if found is not None:
            known[eval_id] = found
        else:
            to_run.append(control)
    return to_run, known


def _known(store: HistoryStore, eval_id: str, key: str) -> ControlOutcome | None:
    lines = [line for line in store.read(eval_id) if line.extra.get("control_key") == key]
    if not lines:
        return None
    newest = max(lines, key=lambda line: parse_started_at(line.started_at))
    held = newest.extra.get("held")
    return ControlOutcome(
        key,
        vacuous=newest.extra.get("vacuous") is True,
        held=tuple(str(label) for label in held) if isinstance(held, list) else (),
    )


def _outcome(result: EntryResult) -> ControlOutcome:
    assert result.entry.cache_key is not None
    vacuous = bool(result.outcomes) and all(outcome.passed for outcome in result.outcomes)
    held = [record.label for o in result.outcomes for record in o.assertions if record.passed]
    return ControlOutcome(result.entry.cache_key, vacuous=vacuous, held=tuple(held) if vacuous else ())


def apply_controls(
    results: Sequence[EntryResult], ran: Sequence[EntryResult], known: Mapping[str, ControlOutcome]
) -> None:
    """Give every result of an eval its control's outcome, from this run or from history."""
    outcomes = dict(known) | {check.entry.spec.id: _outcome(check) for check in ran}
    for result in results:
        result.control = outcomes.get(result.entry.spec.id)
