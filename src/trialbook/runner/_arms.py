"""The with/without comparisons of a run, from its plan and results (pure).

Each arm of a ``compare:`` eval is an ordinary plan entry (the ``without`` arm under its own label), so
running, caching and history need nothing special; only here are the two put side by side. An arm that
was cached contributes the counts of the history line it was cached from, so a nightly run that re-ran
only the ``without`` arm (an agent update, say) still reports the comparison.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from ..evidence import AgentResult
from ._engine import EntryResult
from ._plan import WITHOUT_SUFFIX, PlanEntry

if TYPE_CHECKING:
    from ..scoring.comparison import ComparedPair

__all__ = ["arm_extra", "comparisons", "trial_loaded"]


def _records(result: AgentResult) -> Iterable[object]:
    found = getattr(result, "instructions_loaded", None)
    return found if isinstance(found, list | tuple) else ()


def _field(record: object, name: str) -> object:
    return record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)


def trial_loaded(result: AgentResult, dropped: Sequence[str]) -> bool | None:
    """Whether every compared input reached the model in this trial; ``None`` when that is not known.

    Read from the trial's ``instructions_loaded`` evidence, where an instruction file is named by its
    sandbox path and a skill by the folder it was placed in (named after the skill). One
    ``loaded: false`` makes it ``False``; it is ``True`` only when every compared input is recorded
    ``loaded: true``.
    """
    states: dict[str, object] = {}
    for record in _records(result):
        path = _field(record, "path")
        if isinstance(path, str):
            loaded = _field(record, "loaded")
            states[path] = loaded
            if _field(record, "kind") == "skill":
                states.setdefault(PurePosixPath(path).name, loaded)
    seen = [states.get(name) for name in dropped]
    if any(state is False for state in seen):
        return False
    if seen and all(state is True for state in seen):
        return True
    return None


def _counts(entry: PlanEntry, result: EntryResult | None) -> tuple[int, int, int | None, int] | None:
    """``(passed, trials, loaded, loaded_unknown)`` of one arm, from its trials or its cached line."""
    if result is not None and result.outcomes:
        from ..scoring.comparison import loaded_counts

        states = [trial_loaded(outcome.result, entry.dropped) for outcome in result.outcomes]
        loaded, unknown = loaded_counts(states)
        return result.passed, len(result.outcomes), loaded if unknown < len(states) else None, unknown
    last = entry.last
    if entry.action != "cached" or last is None:
        return None
    passed, trials = getattr(last, "passed", None), getattr(last, "trials", None)
    if not isinstance(passed, int) or not isinstance(trials, int):
        return None
    extra = getattr(last, "extra", None) or {}
    known, missing = extra.get("loaded"), extra.get("loaded_unknown")
    if isinstance(known, int) and isinstance(missing, int) and known + missing <= trials:
        return passed, trials, known, missing
    return passed, trials, None, trials


def comparisons(plan: Sequence[PlanEntry], results: Sequence[EntryResult]) -> list[ComparedPair]:
    """Every eval × agent whose two arms both ran or were cached, in plan order."""
    by_key = {result.entry.key: result for result in results}
    entries = {entry.key: entry for entry in plan}
    found: list[ComparedPair] = []
    for entry in plan:
        without = entries.get(entry.key + WITHOUT_SUFFIX)
        if entry.arm != "with" or without is None or entry.spec.compare is None:
            continue
        with_result = by_key.get(entry.key)
        with_counts = _counts(entry, with_result)
        # The without arm's loaded state is not asked: what counts is whether the with arm's reached.
        without_counts = _counts(without, by_key.get(without.key))
        if with_counts is None or without_counts is None:
            continue
        passed, trials, loaded, unknown = with_counts
        from ..scoring.comparison import ComparedPair, Comparison  # only a run with compared arms needs them

        comparison = Comparison(
            with_passed=passed,
            with_trials=trials,
            without_passed=without_counts[0],
            without_trials=without_counts[1],
            dropped=without.dropped,
            loaded=loaded,
            loaded_unknown=unknown if loaded is not None else 0,
            alpha=entry.spec.compare.alpha,
            pairwise=with_result.pairwise if with_result is not None else None,
        )
        found.append(ComparedPair(entry.spec.id, entry.label, comparison))
    return found


def arm_extra(result: EntryResult) -> dict[str, object]:
    """What a history line of a compared eval adds under ``extra``: its arm, and what that arm knows.

    The ``with`` arm keeps its loaded counts (so a later run that reuses it from the cache can still
    say how often the inputs loaded); the ``without`` arm keeps the names it left out.
    """
    entry = result.entry
    if entry.arm is None:
        return {}
    extra: dict[str, object] = {"arm": entry.arm}
    if entry.arm == "without":
        extra["dropped"] = list(entry.dropped)
        return extra
    from ..scoring.comparison import loaded_counts

    states = [trial_loaded(outcome.result, entry.dropped) for outcome in result.outcomes]
    loaded, unknown = loaded_counts(states)
    if unknown < len(states):
        extra["loaded"] = loaded
        extra["loaded_unknown"] = unknown
    return extra
