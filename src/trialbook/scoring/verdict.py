"""How trials add up to a verdict for one eval × agent (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..evidence import AgentResult

__all__ = ["EXECUTION_FAILURES", "Verdict", "eval_verdict", "meets", "trial_passed"]

Verdict = Literal["pass", "fail", "error", "incomplete", "vacuous", "judge_uncalibrated"]
"""``vacuous``: the eval's negative control passed, i.e. the eval passes with no agent at all.
``judge_uncalibrated``: a judge panel graded its labelled examples wrong, so its verdicts do not count."""

EXECUTION_FAILURES = frozenset({"execution_error", "cleanup_error", "request_audit_error"})
"""Stop reasons that mean the agent could not run the task at all, as opposed to doing it badly."""


def trial_passed(result: AgentResult, assertions_passed: Sequence[bool]) -> bool:
    """A trial passes when the agent did not time out, it ran, and every assertion held."""
    if result.stop_reason == "timeout":
        return False
    if not result.success and result.stop_reason in EXECUTION_FAILURES:
        return False
    return all(assertions_passed)


def meets(passed: int, trials: int, threshold: float) -> bool:
    """Whether ``passed`` of ``trials`` reaches ``threshold``, compared at two decimals.

    Pass rates are written with two decimals (``0.67`` for two out of three); comparing the exact
    fraction would make 2/3 = 0.666… fail a threshold everyone reads as "two of three".
    """
    return round(passed / trials, 2) >= round(threshold, 2)


def _errored(result: AgentResult) -> bool:
    return not result.success and result.stop_reason in EXECUTION_FAILURES


def eval_verdict(
    results: Sequence[AgentResult], passed: Sequence[bool], *, planned: int, threshold: float
) -> Verdict:
    """The verdict of one eval × agent.

    ``pass`` when passed/planned meets the threshold. Otherwise ``incomplete`` when trials were left
    unstarted (the budget ran out) and the threshold could still have been met; ``error`` when some trial
    could not execute (so the prompt was not really tried); ``fail`` otherwise.
    """
    wins = sum(passed)
    if planned > 0 and meets(wins, planned, threshold):
        return "pass"
    unstarted = planned - len(results)
    if unstarted > 0 and meets(wins + unstarted, planned, threshold):
        return "incomplete"
    if any(_errored(result) for result in results):
        return "error"
    return "fail"
