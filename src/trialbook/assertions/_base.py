"""What every assertion provides, and running a list of them over one finished trial."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..evidence import AssertionRecord, Call, JsonObject, JsonValue
from ._trial import FinishedTrial

if TYPE_CHECKING:
    from ._judge import JudgeAsker

__all__ = [
    "Assertion",
    "CheckProgress",
    "check_one",
    "describe_calls",
    "evaluate_all",
    "exit_text",
    "make_label",
    "numbered",
    "unfinished",
]


@runtime_checkable
class Assertion(Protocol):
    """A check over a finished trial.

    ``to_json`` is the assertion's canonical description: it goes into the cache key, so two assertions
    that can decide differently must never describe themselves the same way.
    """

    @property
    def kind(self) -> str:
        """The eval-file key that writes this assertion, e.g. ``ran_in_order``."""
        ...

    @property
    def label(self) -> str:
        """How reports name this assertion, e.g. ``ran "neon deploy"``."""
        ...

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Decide over ``trial`` and say what was expected and what was seen."""
        ...

    def to_json(self) -> JsonObject:
        """The canonical description of this assertion, for cache keys."""
        ...


class CheckProgress:
    """How far a trial's checks got, readable from another thread when they overrun their deadline.

    ``running`` names what runs now (a check's label, or a step before the checks); ``records`` holds
    every finished check's record. Written by the checking thread only, read once it is given up on.
    """

    def __init__(self) -> None:
        self.running: str | None = None
        self.records: list[AssertionRecord] = []


def evaluate_all(
    assertions: Sequence[Assertion],
    trial: FinishedTrial,
    progress: CheckProgress | None = None,
    judges: JudgeAsker | None = None,
) -> tuple[AssertionRecord, ...]:
    """Check every assertion, in order, even after a failure, so one run shows every problem.

    A check that raises becomes a failed record with ``error`` set instead of ending the trial: one broken
    custom check must not hide what the other assertions found. ``judges`` answers ``judge`` assertions;
    without it they record an error.
    """
    progress = progress if progress is not None else CheckProgress()
    records = progress.records
    for assertion in assertions:
        progress.running = assertion.label
        try:
            records.append(check_one(assertion, trial, judges))
        except Exception as exc:
            records.append(unfinished(assertion, "the check could not run", f"{type(exc).__name__}: {exc}"))
    progress.running = None
    return tuple(records)


def check_one(
    assertion: Assertion, trial: FinishedTrial, judges: JudgeAsker | None = None
) -> AssertionRecord:
    """One assertion's record: a ``judge`` check asks through ``judges`` when there are any."""
    if judges is not None and assertion.kind == "judge":
        from ._judge import Judge  # loaded only by runs whose evals judge

        if isinstance(assertion, Judge):
            return assertion.judge(trial, judges)
    return assertion.check(trial)


def unfinished(assertion: Assertion, actual: str, error: str | None) -> AssertionRecord:
    """The failed record of a check that gave no verdict of its own: it raised, overran or never ran."""
    return AssertionRecord(
        kind=assertion.kind, label=assertion.label, passed=False, expected=assertion.label, actual=actual,
        error=error,
    )  # fmt: skip


def make_label(kind: str, argument: JsonValue) -> str:
    """``kind`` followed by its argument as JSON, e.g. ``ran_in_order ["/neon init .*/", "neon deploy"]``."""
    return f"{kind} {json.dumps(argument, ensure_ascii=False)}"


def exit_text(call: Call) -> str:
    """How a call ended, as reports show it: ``exit 0``, ``killed`` or the shim's own error."""
    if call.error:
        return f"shim error: {call.error}"
    return "killed" if call.exit_code is None else f"exit {call.exit_code}"


def numbered(found: Sequence[tuple[int, Call]]) -> str:
    """Calls with their 1-based numbers in the trial and how each ended, one per indented line."""
    return "\n".join(f"  {index}. {call.line} ({exit_text(call)})" for index, call in found)


def describe_calls(calls: Sequence[Call]) -> str:
    """Every call, numbered from 1 as reports show them, or a plain statement that there were none."""
    if not calls:
        return "no shimmed call was recorded"
    return f"calls seen ({len(calls)}):\n" + numbered(list(enumerate(calls, start=1)))
