from fractions import Fraction

import pytest

from trialbook.scoring.stats import (
    DEFAULT_ALPHA,
    REGRESSION_TEST_NAME,
    fisher_one_sided_less,
    regression_test,
    wilson_interval,
)


def test_fisher_matches_the_scipy_documented_table() -> None:
    # scipy's fisher_exact example table [[8, 2], [1, 5]]: base passed 8 of 9, current 2 of 7.
    # Lower tail by hand: (C(10,8)C(6,1) + C(10,9)C(6,0)) / C(16,9) = (270 + 10) / 11440.
    assert fisher_one_sided_less(8, 9, 2, 7) == Fraction(280, 11440)
    assert float(fisher_one_sided_less(8, 9, 2, 7)) == pytest.approx(0.0244755244755)


def test_fisher_three_of_three_to_zero_of_three() -> None:
    # Only one table with these margins is as extreme: 1 / C(6,3) = 1/20.
    assert fisher_one_sided_less(3, 3, 0, 3) == Fraction(1, 20)


def test_fisher_three_of_three_to_one_of_three() -> None:
    # X ~ Hypergeom(6 trials, 4 passes, 3 drawn), P(X <= 1) = C(4,1)C(2,2)/C(6,3) = 4/20.
    assert fisher_one_sided_less(3, 3, 1, 3) == Fraction(4, 20)


def test_fisher_no_change_is_never_significant() -> None:
    assert fisher_one_sided_less(2, 3, 2, 3) > Fraction(1, 2)
    assert fisher_one_sided_less(3, 3, 3, 3) == 1
    assert fisher_one_sided_less(0, 5, 0, 5) == 1


def test_fisher_improvement_has_large_p_value() -> None:
    assert fisher_one_sided_less(0, 5, 5, 5) == 1


def test_fisher_empty_table() -> None:
    assert fisher_one_sided_less(0, 0, 0, 0) == 1


def test_regression_flag_uses_alpha() -> None:
    drop = regression_test(3, 3, 0, 3)
    assert drop.p_value == pytest.approx(0.05)
    assert drop.regressed is True
    assert drop.alpha == DEFAULT_ALPHA
    assert drop.test == REGRESSION_TEST_NAME
    strict = regression_test(3, 3, 0, 3, alpha=0.01)
    assert strict.regressed is False
    small_drop = regression_test(3, 3, 1, 3)
    assert small_drop.p_value == pytest.approx(0.2)
    assert small_drop.regressed is False


def test_regression_boundary_is_inclusive() -> None:
    assert regression_test(3, 3, 0, 3, alpha=0.05).regressed is True


@pytest.mark.parametrize(("args", "message"), [((4, 3, 0, 3), "base"), ((1, 1, -1, 3), "current")])
def test_bad_counts_are_rejected(args: tuple[int, int, int, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fisher_one_sided_less(*args)


def test_bad_alpha_is_rejected() -> None:
    with pytest.raises(ValueError, match="alpha"):
        regression_test(1, 1, 1, 1, alpha=1.5)


def test_wilson_known_values() -> None:
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    low, high = wilson_interval(0, 10)
    assert low == 0.0
    assert high == pytest.approx(0.2775, abs=1e-4)
    low, high = wilson_interval(3, 3)
    assert high == 1.0
    assert low == pytest.approx(0.4385, abs=1e-4)


def test_wilson_needs_trials() -> None:
    with pytest.raises(ValueError, match="no trials"):
        wilson_interval(0, 0)
