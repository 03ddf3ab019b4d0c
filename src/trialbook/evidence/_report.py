"""Suite and test reports: the persisted shape of a run (schema 4.0).

A test is one pytest test or one eval × agent. Its executions are the agent runs it captured (the trials
of an eval), each with its full result record.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar, Literal, get_args

from ._json import JsonValue
from ._result import AgentResult

__all__ = [
    "OUTCOMES",
    "SCHEMA_VERSION",
    "AssertionRecord",
    "ExecutionRecord",
    "Outcome",
    "SuiteMetadata",
    "SuiteReport",
    "TestReport",
]

SCHEMA_VERSION = "4.0"

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "incomplete", "cached"]
OUTCOMES: tuple[str, ...] = get_args(Outcome)


@dataclass(frozen=True)
class AssertionRecord:
    """The result of one check over a finished trial: what was expected and what was seen.

    ``error`` is set when the check itself could not run (a crashing custom check), which never passes.
    """

    kind: str
    label: str
    passed: bool
    expected: str
    actual: str
    error: str | None = None


@dataclass(frozen=True, kw_only=True)
class ExecutionRecord:
    """One captured agent run inside a test.

    ``trial`` numbers the trials of an eval from 1 (``None`` for pytest executions); ``passed`` is that
    trial's verdict (``None`` where the test's outcome is the only verdict, as in pytest);
    ``comparison_role`` is report metadata for A/B comparisons, never runtime configuration.
    """

    DERIVED: ClassVar[tuple[str, ...]] = ("estimated_cost_usd", "unpriced_models")

    result: AgentResult
    trial: int | None = None
    comparison_role: str | None = None
    passed: bool | None = None
    assertions: tuple[AssertionRecord, ...] = ()

    @property
    def estimated_cost_usd(self) -> float | None:
        """The result tree's estimated cost, ``None`` when some usage could not be priced."""
        return self.result.estimated_cost().usd

    @property
    def unpriced_models(self) -> tuple[str, ...]:
        """Models that had no price, so the estimate is missing rather than low."""
        return self.result.estimated_cost().unpriced_models


@dataclass(frozen=True, kw_only=True)
class TestReport:
    """One pytest test or one eval × agent.

    ``properties`` carries verification properties (pytest ``record_property``, or an eval's pass-rate
    figures); values are kept as given, never coerced to strings.
    """

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name

    id: str
    outcome: Outcome
    duration_s: float | None = None
    assertion_errors: tuple[str, ...] = ()
    properties: dict[str, JsonValue] = field(default_factory=dict)
    executions: tuple[ExecutionRecord, ...] = ()


@dataclass(frozen=True, kw_only=True)
class SuiteMetadata:
    """Where and when a suite was produced."""

    producer: str
    trialbook_version: str
    started_at: str
    finished_at: str | None = None
    duration_s: float | None = None
    git_commit: str | None = None
    ci_run_url: str | None = None


@dataclass(frozen=True, kw_only=True)
class SuiteReport:
    """A whole run: metadata, tests and outcome counts, in schema :data:`SCHEMA_VERSION`."""

    DERIVED: ClassVar[tuple[str, ...]] = ("outcome_counts",)

    metadata: SuiteMetadata
    tests: tuple[TestReport, ...] = ()
    schema_version: str = SCHEMA_VERSION

    @property
    def outcome_counts(self) -> dict[str, int]:
        """How many tests ended in each outcome; every outcome is listed, zero included."""
        counts: Counter[str] = Counter(test.outcome for test in self.tests)
        return {outcome: counts.get(outcome, 0) for outcome in OUTCOMES}
