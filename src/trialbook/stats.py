"""Small-sample statistics for eval verdicts: did this run get worse than the base's last run?

An eval × agent usually runs a handful of trials (3, 5, 10). At those sizes the normal approximation
behind a z-test or a chi-square test is badly off, and a difference such as 3/3 against 1/3 is exactly
the kind of change reviewers want flagged. Fisher's exact test conditions on the table's margins and sums
the hypergeometric probabilities directly, so its p-value is exact for any sample size and never needs a
minimum expected count. It is conservative (it flags fewer regressions than it could), which is the side
to err on when the flag asks a person to look at a PR.

Everything here is pure arithmetic over integers (``math.comb`` and ``fractions.Fraction``), so there is
no dependency on scipy and no floating-point drift in the tail sums.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "DEFAULT_ALPHA",
    "REGRESSION_TEST_NAME",
    "RegressionTest",
    "fisher_one_sided_less",
    "regression_test",
    "wilson_interval",
]

DEFAULT_ALPHA = 0.1
"""A loose level on purpose: with 3-5 trials a strict 0.05 would almost never flag anything."""

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
    return (max(0.0, centre - half), min(1.0, centre + half))
