"""Wilson intervals and the adaptive stopping rule against references computed another way in the test."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import pytest

from trialbook.scoring.stats import (
    early_verdict,
    format_rate,
    needed_passes,
    predictive_pass_probability,
    rate_json,
    wilson_interval,
)
from trialbook.scoring.verdict import meets

Z95 = 1.959963984540054


def _score_test_accepts(passed: int, trials: int, rate: float) -> bool:
    # The Wilson interval is the set of rates the two-sided score test at 95% does not reject.
    observed = passed / trials
    return (observed - rate) ** 2 <= Z95 * Z95 * rate * (1 - rate) / trials


def _inverted_score_test(passed: int, trials: int, steps: int = 20_000) -> tuple[float, float]:
    accepted = [i / steps for i in range(steps + 1) if _score_test_accepts(passed, trials, i / steps)]
    return accepted[0], accepted[-1]


@pytest.mark.parametrize(("passed", "trials"), [(k, n) for n in range(1, 9) for k in range(n + 1)])
def test_wilson_is_the_inverted_score_test(passed: int, trials: int) -> None:
    low, high = wilson_interval(passed, trials)
    ref_low, ref_high = _inverted_score_test(passed, trials)
    # The grid step is 5e-5; the edges of the accepted set are within one step of the exact roots.
    assert low == pytest.approx(ref_low, abs=1e-4)
    assert high == pytest.approx(ref_high, abs=1e-4)
    assert 0.0 <= low <= passed / trials <= high <= 1.0


def test_rates_are_written_with_their_interval() -> None:
    assert format_rate(2, 3) == "2/3 (21–94%)"
    assert format_rate(3, 3) == "3/3 (44–100%)"
    assert format_rate(0, 0) == "0/0"
    assert rate_json(0, 0) == {"pass_rate": None, "pass_rate_ci95_low": None, "pass_rate_ci95_high": None}
    assert rate_json(8, 10) == {"pass_rate": 0.8, "pass_rate_ci95_low": 0.4902, "pass_rate_ci95_high": 0.9433}


def _urn_pass_probability(white: int, black: int, remaining: int, short: int) -> Fraction:
    """Pólya urn, enumerated draw by draw: the predictive distribution under a uniform prior, exactly."""
    total = Fraction(0)
    for draws in itertools.product((True, False), repeat=remaining):
        chance, w, b = Fraction(1), white, black
        for win in draws:
            chance *= Fraction(w if win else b, w + b)
            w, b = (w + 1, b) if win else (w, b + 1)
        if sum(draws) >= short:
            total += chance
    return total


CASES = [
    (k, n, planned, threshold)
    for planned in range(1, 8)
    for n in range(0, planned + 1)
    for k in range(n + 1)
    for threshold in (0.5, 0.67, 0.8, 1.0)
]


@pytest.mark.parametrize(("passed", "ran", "planned", "threshold"), CASES)
def test_predictive_probability_matches_the_enumerated_urn(
    passed: int, ran: int, planned: int, threshold: float
) -> None:
    need = min(k for k in range(planned + 2) if k > planned or meets(k, planned, threshold))
    expected = _urn_pass_probability(1 + passed, 1 + ran - passed, planned - ran, need - passed)
    assert predictive_pass_probability(passed, ran, planned, threshold) == expected
    assert needed_passes(planned, threshold) == need


@pytest.mark.parametrize(("passed", "ran", "planned", "threshold"), [c for c in CASES if c[1] > 0])
def test_an_early_stop_is_a_verdict_the_trials_so_far_agree_with(
    passed: int, ran: int, planned: int, threshold: float
) -> None:
    decided = early_verdict(passed, ran, planned, threshold)
    completions = [passed + extra for extra in range(planned - ran + 1)]
    finals = {meets(total, planned, threshold) for total in completions}
    if len(finals) == 1:
        # Nothing the remaining trials do can change the verdict: the rule must stop, at that verdict.
        assert decided == ("pass" if finals == {True} else "fail")
    if decided is not None:
        assert decided == ("pass" if meets(passed, ran, threshold) else "fail")
        chance = predictive_pass_probability(passed, ran, planned, threshold)
        assert chance >= Fraction(95, 100) if decided == "pass" else chance <= Fraction(5, 100)


def test_known_stops() -> None:
    # 3/3 with 7 to go at pass_rate 0.5: the remaining 7 would need 5 failures; chance of that under a
    # uniform prior updated on 3 passes is 1.52%, so the rule stops at pass.
    assert early_verdict(3, 3, 10, 0.5) == "pass"
    assert float(1 - predictive_pass_probability(3, 3, 10, 0.5)) == pytest.approx(0.01515, abs=1e-5)
    # 3/3 at pass_rate 1.0 needs all 7 more: 4/11 by the urn; no stop.
    assert predictive_pass_probability(3, 3, 10, 1.0) == Fraction(4, 11)
    assert early_verdict(3, 3, 10, 1.0) is None
    # One failure at pass_rate 1.0 decides it.
    assert early_verdict(2, 3, 10, 1.0) == "fail"
    assert math.isclose(float(predictive_pass_probability(0, 0, 1, 0.5)), 0.5)
