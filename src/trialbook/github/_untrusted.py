"""A results artifact is data an agent could have written: what the publish step accepts from it.

The job that runs agents can change anything its runner holds, its own results included. So the publish
job, on a runner no agent touched, checks the hand-over (``ci.json``) before anything of it is pushed,
posted or printed: every history line must belong to an eval × agent pair the eval files in the publish
job's own checkout define, at most one line a pair, marked with this workflow run's own event and ref
(a pull request's run cannot write lines that pass for the default branch's); and no text may hold a
line that the Actions runner would read as a workflow command. A failed check refuses the whole
artifact: nothing of it is published.

What an agent can still do is forge its own run's results: verdicts, counts and failure text of the
pairs its run planned. That is documented (docs/github-action.md, Trust boundary), not prevented.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict, is_dataclass
from typing import Any

from ..errors import ExitCode, TrialbookError
from ._state import CiState

__all__ = ["TamperedArtifact", "check_artifact"]

_COMMAND = re.compile(r"^\s*::[A-Za-z][\w-]*(?:\s[^\r\n]*)?::", re.MULTILINE)
"""A line the runner executes as a workflow command (it also splits lines at a lone carriage return)."""

_SHOWN = 5


class TamperedArtifact(TrialbookError):
    """The artifact holds what no run of trialbook writes: it is refused whole (exit code 1)."""

    exit_code = ExitCode.FAILED


def _strings(value: Any) -> Iterable[str]:
    """Every string inside ``value`` (dataclasses, mappings, sequences), depth first."""
    if isinstance(value, str):
        yield value
    elif is_dataclass(value) and not isinstance(value, type):
        yield from _strings(asdict(value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item)


def _commands(state: CiState) -> list[str]:
    found = []
    for text in _strings((state.reason, state.error, state.review, state.eval_files)):
        match = _COMMAND.search(text.replace("\r", "\n"))
        if match is not None:
            found.append(match.group(0).strip()[:60])
    return found


def _line_problems(state: CiState, planned: Collection[tuple[str, str]], event: str, ref: str) -> list[str]:
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for line in state.history_lines:
        pair = (line.id, line.agent)
        where = f"the history line of {line.id} × {line.agent}"
        if pair not in planned:
            problems.append(f"{where}: no eval file of this checkout defines that eval × agent")
        elif pair in seen:
            problems.append(f"{where}: a second line for one pair (a run writes one)")
        seen.add(pair)
        extra = line.extra if isinstance(line.extra, Mapping) else {}
        marked = (extra.get("event"), extra.get("ref"))
        if marked != (event, ref):
            problems.append(
                f"{where}: marked as recorded by {marked[0]!r} on {marked[1]!r}, not by this workflow run "
                f"({event!r} on {ref!r})"
            )
    return problems


def check_artifact(
    state: CiState, planned: Collection[tuple[str, str]], *, event: str, ref: str, source: str
) -> None:
    """Refuse ``state`` (read from ``source``) unless it is what this workflow run's own run could write.

    Raises:
        TamperedArtifact: naming the first problems found; the caller publishes nothing.
    """
    problems = _line_problems(state, planned, event, ref)
    problems += [f"text that the runner would execute as a workflow command: {c!r}" for c in _commands(state)]
    if problems:
        shown = "; ".join(problems[:_SHOWN])
        more = f" (and {len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
        raise TamperedArtifact(
            f"{source}: refused, nothing of it is published: {shown}{more}. A results artifact is written "
            "by the job that ran the agents, so it is checked before it is trusted (docs/github-action.md, "
            "Trust boundary)."
        )
