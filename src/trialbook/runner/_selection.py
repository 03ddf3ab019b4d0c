"""What ``--filter``, ``--agent`` and ``--last-failed`` select — and a refusal when they select nothing.

A typo in a filter must never turn CI green by running nothing, so a filter matching no eval id and an
agent name that neither trialbook nor any eval knows are errors (exit 2) that name the closest choices.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from ..errors import UsageError
from ..evalfiles import EvalSpec

__all__ = ["Selection", "check_selection", "closest"]


def closest(wanted: str, choices: Iterable[str], limit: int = 3) -> list[str]:
    """The choices nearest to ``wanted`` (glob characters ignored), or the first few when none is near."""
    import difflib  # only a selection that matches nothing needs it

    pool = sorted(set(choices))
    bare = wanted.strip("*?[]") or wanted
    near = difflib.get_close_matches(bare, pool, n=limit, cutoff=0.3)
    near += [c for c in pool if bare and bare in c and c not in near]
    return near[:limit] or pool[:limit]


@dataclass(frozen=True)
class Selection:
    """The selection options of a run; empty means "everything"."""

    filters: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    only_keys: frozenset[str] | None = None
    """``<id>::<agent>`` pairs to keep (``--last-failed``); ``None`` keeps every pair."""
    only_reason: str = ""

    def matches_id(self, eval_id: str) -> bool:
        """Whether the id matches any ``--filter`` (the union), or there are none."""
        return not self.filters or any(fnmatch.fnmatch(eval_id, glob) for glob in self.filters)

    @property
    def filter_reason(self) -> str:
        """Why a pair was filtered out by ``--filter``."""
        shown = ", ".join(self.filters)
        return f"id does not match {shown}" if len(self.filters) == 1 else f"id matches none of {shown}"


def _names(spec: EvalSpec, labels: Sequence[str]) -> set[str]:
    return {agent.name for agent in spec.agents} | set(labels)


def check_selection(
    specs: Sequence[EvalSpec],
    selection: Selection,
    *,
    registered: Collection[str],
    labels: dict[str, list[str]],
) -> None:
    """Refuse (exit 2) a ``--filter`` that matches no eval or an ``--agent`` no eval or registry knows.

    ``labels`` maps each eval id to its agents' labels (``name`` or ``name-2``).
    """
    ids = [spec.id for spec in specs]
    problems: list[str] = []
    for glob in selection.filters:
        if not any(fnmatch.fnmatch(eval_id, glob) for eval_id in ids):
            problems.append(f"--filter {glob!r} matches no eval id; closest: {', '.join(closest(glob, ids))}")
    defined = set().union(*(_names(spec, labels.get(spec.id, [])) for spec in specs)) if specs else set()
    for name in selection.agents:
        if name not in defined and name not in registered:
            choices = sorted(defined | set(registered))
            problems.append(
                f"--agent {name!r} is neither a registered agent nor one an eval defines; closest: "
                + ", ".join(closest(name, choices))
            )
    if len(problems) == 1:
        raise UsageError(problems[0])
    if problems:
        raise UsageError("the selection matches nothing:\n" + "\n".join(f"  {p}" for p in problems))
