"""Turn a finished run into the schema-4.0 suite report (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime

from .. import __version__
from ..evidence import ExecutionRecord, JsonValue, Outcome, SuiteMetadata, SuiteReport, TestReport
from ..scoring.stats import rate_json
from ._arms import comparisons
from ._engine import EntryResult
from ._history import cached_failures
from ._judges import uses_judges
from ._plan import PlanEntry

__all__ = ["build_suite", "iso_utc"]

_OUTCOME: dict[str, Outcome] = {
    "pass": "passed",
    "fail": "failed",
    "error": "error",
    "incomplete": "incomplete",
    "vacuous": "failed",
    "judge_uncalibrated": "error",
}


def iso_utc(timestamp: float) -> str:
    """``2026-11-29T21:13:57Z`` for a Unix time."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _properties(entry: PlanEntry) -> dict[str, JsonValue]:
    return {
        "eval_id": entry.spec.id,
        "agent": entry.label,
        "agent_name": entry.agent.name,
        "agent_version": entry.agent_version,
        "model": entry.model,
        "threshold": entry.spec.pass_rate,
        "planned_trials": entry.spec.trials,
        "min_trials": entry.spec.min_trials,
        "cache_key": entry.cache_key,
        "prompt_sha256": entry.prompt_sha256,
        "eval_file": str(entry.spec.source),
        "reason": entry.reason,
        # Only on compared evals, so every other test keeps the properties it had.
        **({"arm": entry.arm, "compared": list(entry.dropped)} if entry.arm is not None else {}),
    }


def _ran(result: EntryResult) -> TestReport:
    entry = result.entry
    executions = [
        ExecutionRecord(
            result=outcome.result,
            trial=outcome.request.trial,
            passed=outcome.passed,
            assertions=outcome.assertions,
        )
        for outcome in result.outcomes
    ]
    properties = _properties(entry)
    properties.update(
        {
            "trials": len(result.outcomes),
            "passed": result.passed,
            **rate_json(result.passed, len(result.outcomes)),
            "unstarted_trials": result.unstarted,
            "saved_trials": result.saved,
            "cancelled_trials": result.cancelled,
            "negative_control": None
            if result.control is None
            else ("vacuous" if result.control.vacuous else "ok"),
            "vacuous_held": list(result.control.held) if result.control and result.control.vacuous else None,
            "verdict": result.verdict,
            "cost_usd": result.cost_usd,
            # Only on evals with judge checks: the judges' cost, apart from the agents' (``cost_usd``).
            **(
                {"judge_cost_usd": result.judge_cost_usd, "judge_calls": _judge_calls(result)}
                if uses_judges(entry.spec.assertions)
                else {}
            ),
            # Only on re-checked pairs: the kept run whose recorded trials were checked again.
            **({"rescored_from": result.rescored_from} if result.rescored_from else {}),
            "unused_shims": list(result.unused_shims),
            # Which mechanism ended the trials' processes, and how many it still found running.
            "process_cleanup": next((o.process_cleanup for o in result.outcomes), None),
            "stray_processes_killed": sum(o.stray_processes_killed for o in result.outcomes),
            "sandbox": {"copy": _copy_method(result), "isolation": entry.isolation, "network": entry.network},
            # Per execution, in their order: bytes each stream lost to the output limit (null: unknown).
            "output_truncated": [
                None if o.output_truncated is None else dict(o.output_truncated) for o in result.outcomes
            ],
        }
    )
    return TestReport(
        id=f"{entry.spec.id}::{entry.label}",
        outcome=_OUTCOME[result.verdict],
        duration_s=result.duration_s,
        assertion_errors=tuple(result.failures),
        properties=properties,
        executions=tuple(executions),
    )


def _judge_calls(result: EntryResult) -> int:
    """Judge requests the pair's trials (and a ``with`` arm's pairwise judges) made, cached ones included."""
    pairwise = result.pairwise.judge_calls if result.pairwise is not None else 0
    return sum(len(outcome.judge_calls) for outcome in result.outcomes) + pairwise


def _copy_method(result: EntryResult) -> str | None:
    """``reflink`` when every trial's template was cloned, ``copy`` when any was copied, else ``None``."""
    methods = {outcome.sandbox_copy for outcome in result.outcomes} - {None}
    if not methods:
        return None
    return "reflink" if methods == {"reflink"} else "copy"


def _not_ran(entry: PlanEntry) -> TestReport:
    properties = _properties(entry)
    last = entry.last
    if entry.action == "cached" and last is not None:
        properties["cached_verdict"] = getattr(last, "verdict", None)
        properties["cached_passed"] = getattr(last, "passed", None)
        properties["cached_trials"] = getattr(last, "trials", None)
        properties["cached_started_at"] = getattr(last, "started_at", None)
        properties["cached_commit"] = getattr(last, "commit", None)
        extra = getattr(last, "extra", None)
        properties["cached_vacuous"] = extra.get("vacuous") if isinstance(extra, dict) else None
        properties["cached_ref"] = extra.get("ref") if isinstance(extra, dict) else None
    outcome: Outcome = "cached" if entry.action == "cached" else "skipped"
    # A cached failure keeps the reasons its history line recorded, so reports can say why it failed.
    errors = cached_failures(last) if entry.action == "cached" else ()
    return TestReport(
        id=f"{entry.spec.id}::{entry.label}", outcome=outcome, assertion_errors=errors, properties=properties
    )


def build_suite(
    plan: Sequence[PlanEntry],
    results: Sequence[EntryResult],
    *,
    started_at: float,
    finished_at: float,
    git_commit: str | None,
    ci_run_url: str | None,
) -> SuiteReport:
    """One test per eval × agent in plan order; executions are the trials that ran."""
    by_key = {result.entry.key: result for result in results}
    tests = [_ran(by_key[entry.key]) if entry.key in by_key else _not_ran(entry) for entry in plan]
    compared = {
        f"{found.eval_id}::{found.agent}": found.comparison.to_json() for found in comparisons(plan, results)
    }
    tests = [
        replace(test, properties={**test.properties, "comparison": compared[test.id]})
        if test.id in compared
        else test
        for test in tests
    ]
    return SuiteReport(
        metadata=SuiteMetadata(
            producer="trialbook eval",
            trialbook_version=__version__,
            started_at=iso_utc(started_at),
            finished_at=iso_utc(finished_at),
            duration_s=finished_at - started_at,
            git_commit=git_commit,
            ci_run_url=ci_run_url,
        ),
        tests=tuple(tests),
    )
