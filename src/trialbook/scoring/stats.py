"""Small-sample statistics for eval verdicts: did this run get worse than the base's last run?

An eval × agent usually runs a handful of trials (3, 5, 10). At those sizes the normal approximation
behind a z-test or a chi-square test is badly off, and a difference such as 3/3 against 1/3 is exactly
the kind of change reviewers want flagged. Fisher's exact test conditions on the table's margins and sums
the hypergeometric probabilities directly, so its p-value is exact for any sample size and never needs a
minimum expected count. It is conservative (it flags fewer regressions than it could), which is the side
to err on when the flag asks a person to look at a PR.

Everything here is pure arithmetic over integers (``math.comb`` and ``fractions.Fraction``), so there is
no dependency on scipy and no floating-point drift in the tail sums. ``fractions`` (and ``decimal``, which it
imports) is loaded by the functions that need it, not with this module: a run that neither compares with a
base nor stops trials early never uses it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fractions import Fraction

__all__ = [
    "COMPARE_ALPHA",
    "DEFAULT_ALPHA",
    "REGRESSION_TEST_NAME",
    "EarlyVerdict",
    "RegressionTest",
    "early_verdict",
    "fisher_one_sided_less",
    "fisher_two_sided",
    "format_rate",
    "needed_passes",
    "predictive_pass_probability",
    "rate_json",
    "regression_test",
    "smallest_two_sided_p",
    "wilson_interval",
]

DEFAULT_ALPHA = 0.1
"""A loose level on purpose: with 3-5 trials a strict 0.05 would almost never flag anything."""

COMPARE_ALPHA = 0.05
"""The default level of a with/without comparison (:mod:`trialbook.scoring.comparison`): an effect
claimed about an instruction file should be a strict one.
Kept here so eval files can be read without loading it."""

REGRESSION_TEST_NAME = "one-sided Fisher exact test"

_Z95 = 1.959963984540054


@dataclass(frozen=True, kw_only=True)
class RegressionTest:
    """The outcome of comparing the current trials with the base's last recorded trials.

    Attributes:
        p_value: probability, if both runs shared one pass rate, of the current run passing this few
            trials or fewer given the total number of passes.
        regressed: ``p_value <= alpha``.
        alpha: the significance level the flag was decided at.
        test: the name of the test, so reports can say which one they used.
    """

    p_value: float
    regressed: bool
    alpha: float
    test: str = REGRESSION_TEST_NAME


def _check_counts(passed: int, trials: int, label: str) -> None:
    if trials < 0 or passed < 0 or passed > trials:
        raise ValueError(f"{label}: need 0 <= passed <= trials, got passed={passed}, trials={trials}")


def fisher_one_sided_less(passed_b: int, trials_b: int, passed_c: int, trials_c: int) -> Fraction:
    """Exact one-sided Fisher p-value that the current pass rate is lower than the base's.

    The 2x2 table is (base, current) x (passed, failed). Given its margins, the number of current
    passes follows a hypergeometric distribution; the p-value is its lower tail at ``passed_c``.
    Returned as a :class:`~fractions.Fraction` so callers and tests can compare exact values.
    """
    from fractions import Fraction

    _check_counts(passed_b, trials_b, "base")
    _check_counts(passed_c, trials_c, "current")
    total = trials_b + trials_c
    passes = passed_b + passed_c
    if total == 0:
        return Fraction(1)
    denominator = math.comb(total, trials_c)
    fails = total - passes
    low = max(0, trials_c - fails)
    tail = sum(math.comb(passes, x) * math.comb(fails, trials_c - x) for x in range(low, passed_c + 1))
    return Fraction(tail, denominator)


def _hypergeometric_weights(passed_a: int, trials_a: int, passed_b: int, trials_b: int) -> dict[int, int]:
    """For every possible count of passes in arm ``a`` given the margins, its number of arrangements."""
    passes = passed_a + passed_b
    fails = trials_a + trials_b - passes
    low, high = max(0, trials_a - fails), min(passes, trials_a)
    return {x: math.comb(passes, x) * math.comb(fails, trials_a - x) for x in range(low, high + 1)}


def fisher_two_sided(passed_a: int, trials_a: int, passed_b: int, trials_b: int) -> Fraction:
    """Exact two-sided Fisher p-value that two arms differ in pass rate, in either direction.

    Given the table's margins, the passes of arm ``a`` follow a hypergeometric distribution; the p-value
    is the total probability of every table no more likely than the observed one (the usual definition,
    the one R's ``fisher.test`` uses). The probabilities are compared as exact integers, so tables of
    equal probability are never split by rounding, which float implementations patch with a tolerance.
    Symmetric in the two arms, and 1 when either arm has no trials or every trial has the same outcome.
    """
    from fractions import Fraction

    _check_counts(passed_a, trials_a, "arm a")
    _check_counts(passed_b, trials_b, "arm b")
    if trials_a == 0 or trials_b == 0:
        return Fraction(1)
    weights = _hypergeometric_weights(passed_a, trials_a, passed_b, trials_b)
    observed = weights[passed_a]
    tail = sum(weight for weight in weights.values() if weight <= observed)
    return Fraction(tail, math.comb(trials_a + trials_b, trials_a))


def smallest_two_sided_p(trials_a: int, trials_b: int) -> Fraction:
    """The smallest p-value :func:`fisher_two_sided` can give with these trial counts.

    It says in advance whether a comparison can reach a significance level at all: with 3 trials an arm
    it is 0.1, so no outcome of 3 against 3 is significant at 0.05. The smallest value is at one of the
    two most lopsided tables (every trial of one arm passed, none of the other).
    """
    return min(
        fisher_two_sided(trials_a, trials_a, 0, trials_b), fisher_two_sided(0, trials_a, trials_b, trials_b)
    )


def regression_test(
    passed_b: int, trials_b: int, passed_c: int, trials_c: int, *, alpha: float = DEFAULT_ALPHA
) -> RegressionTest:
    """Decide whether the current trials are a regression from the base's last result.

    Args:
        passed_b: trials that passed in the base's last recorded run.
        trials_b: trials in that run.
        passed_c: trials that passed now.
        trials_c: trials run now.
        alpha: significance level; the default is deliberately loose for samples this small.

    Returns:
        The p-value of the one-sided Fisher exact test and whether it is at or below ``alpha``.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha}")
    from fractions import Fraction

    p = fisher_one_sided_less(passed_b, trials_b, passed_c, trials_c)
    return RegressionTest(p_value=float(p), regressed=p <= Fraction(alpha), alpha=alpha)


def wilson_interval(passed: int, trials: int, *, z: float = _Z95) -> tuple[float, float]:
    """Wilson score interval for a pass rate (95% by default).

    Chosen over the textbook ``p ± z·sqrt(p(1-p)/n)`` because that one collapses to a zero-width
    interval at 0/n and n/n, which is exactly where short eval runs land most often; Wilson stays
    inside [0, 1] and keeps a sensible width there.

    Raises:
        ValueError: when ``trials`` is zero (no interval exists) or the counts are inconsistent.
    """
    _check_counts(passed, trials, "wilson_interval")
    if trials == 0:
        raise ValueError("wilson_interval: no trials, so there is no pass rate to bound")
    n = float(trials)
    p = passed / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = (z / (1 + z2 / n)) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    # At 0/n and n/n the bound is exactly 0 or 1; rounding must not leave 1e-17 or 0.9999999.
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == trials else min(1.0, centre + half)
    return (low, high)


def format_rate(passed: int, trials: int) -> str:
    """``2/3 (21–94%)``: the count and its Wilson 95% interval in whole percent; ``0/0`` alone.

    The count stays first because it is what a reader checks against the transcripts; the interval says
    how much a pass rate from that many trials can be trusted.
    """
    if trials == 0:
        return f"{passed}/{trials}"
    low, high = wilson_interval(passed, trials)
    return f"{passed}/{trials} ({_percent(low)}–{_percent(high)}%)"


def _percent(value: float) -> str:
    return f"{math.floor(value * 100 + 0.5):d}"


def rate_json(passed: int, trials: int) -> dict[str, float | None]:
    """``pass_rate`` and its Wilson 95% bounds for JSON outputs; all ``None`` when no trial ran."""
    if trials == 0:
        return {"pass_rate": None, "pass_rate_ci95_low": None, "pass_rate_ci95_high": None}
    low, high = wilson_interval(passed, trials)
    return {
        "pass_rate": passed / trials,
        "pass_rate_ci95_low": round(low, 4),
        "pass_rate_ci95_high": round(high, 4),
    }


EarlyVerdict = Literal["pass", "fail"]


def _meets(passed: int, trials: int, threshold: float) -> bool:
    # The same two-decimal comparison as trialbook.scoring.verdict.meets (kept here so stats imports nothing).
    return round(passed / trials, 2) >= round(threshold, 2)


def needed_passes(trials: int, threshold: float) -> int:
    """The fewest passes out of ``trials`` that meet ``threshold`` (``trials + 1`` when none does)."""
    return next((k for k in range(trials + 1) if trials and _meets(k, trials, threshold)), trials + 1)


def _beta(a: int, b: int) -> Fraction:
    """The Beta function at whole numbers, exactly: (a-1)! (b-1)! / (a+b-1)!."""
    from fractions import Fraction

    return Fraction(math.factorial(a - 1) * math.factorial(b - 1), math.factorial(a + b - 1))


def predictive_pass_probability(passed: int, ran: int, planned: int, threshold: float) -> Fraction:
    """Chance, given ``passed`` of ``ran`` so far, that all ``planned`` trials would meet ``threshold``.

    The pass rate is unknown; starting from a uniform prior (every rate equally likely) and updating on
    the trials seen, the passes among the remaining trials follow a beta-binomial distribution, whose
    upper tail is summed here exactly. It is 1 or 0 when the remaining trials cannot change the verdict.
    """
    from fractions import Fraction

    _check_counts(passed, ran, "predictive_pass_probability")
    if planned < ran:
        raise ValueError(f"predictive_pass_probability: planned={planned} is fewer than ran={ran}")
    remaining = planned - ran
    short = needed_passes(planned, threshold) - passed
    if short <= 0:
        return Fraction(1)
    if short > remaining:
        return Fraction(0)
    a, b = 1 + passed, 1 + ran - passed
    tail = sum(math.comb(remaining, x) * _beta(x + a, remaining - x + b) for x in range(short, remaining + 1))
    return tail / _beta(a, b)


def early_verdict(
    passed: int, ran: int, planned: int, threshold: float, *, confidence: Fraction | None = None
) -> EarlyVerdict | None:
    """The verdict adaptive trials may stop at after ``passed`` of ``ran``, or ``None`` to go on.

    Stop at ``pass`` when the trials so far meet the threshold and the chance that all ``planned`` would
    too is at least ``confidence``; at ``fail`` when they miss it and that chance is at most
    ``1 - confidence``, 95% unless given. A verdict the remaining trials cannot change any more is always
    a stop. Requiring the trials so far to agree means the stopped verdict is also the verdict of the
    trials that ran.
    """
    if ran == 0:
        return None
    from fractions import Fraction

    sure = Fraction(95, 100) if confidence is None else confidence
    chance = predictive_pass_probability(passed, ran, planned, threshold)
    so_far = _meets(passed, ran, threshold)
    if chance == 1 or (so_far and chance >= sure):
        return "pass"
    if chance == 0 or (not so_far and chance <= 1 - sure):
        return "fail"
    return None
