"""The two-sided Fisher exact test behind with/without comparisons, against a brute-force count."""

import itertools
import math
from collections import Counter
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from trialbook.scoring.stats import fisher_two_sided, smallest_two_sided_p


def brute_force(passed_a: int, trials_a: int, passed_b: int, trials_b: int) -> Fraction:
    """Enumerate every way the pooled passes could fall on the labelled trials, under no difference."""
    total = trials_a + trials_b
    passes = passed_a + passed_b
    # Trials 0..trials_a-1 belong to arm a; count arrangements by how many passes land in arm a.
    counts = Counter(
        sum(1 for trial in chosen if trial < trials_a)
        for chosen in itertools.combinations(range(total), passes)
    )
    arrangements = sum(counts.values())
    observed = counts[passed_a]
    return Fraction(sum(n for n in counts.values() if n <= observed), arrangements)


@st.composite
def tables(draw: st.DrawFn, most: int = 7) -> tuple[int, int, int, int]:
    trials_a = draw(st.integers(0, most))
    trials_b = draw(st.integers(0, most))
    return draw(st.integers(0, trials_a)), trials_a, draw(st.integers(0, trials_b)), trials_b


@given(tables())
@settings(max_examples=300)
def test_matches_brute_force_enumeration(table: tuple[int, int, int, int]) -> None:
    _, trials_a, _, trials_b = table
    expected = Fraction(1) if 0 in (trials_a, trials_b) else brute_force(*table)
    assert fisher_two_sided(*table) == expected


@given(tables(most=30))
def test_p_value_is_a_probability_and_symmetric(table: tuple[int, int, int, int]) -> None:
    passed_a, trials_a, passed_b, trials_b = table
    p = fisher_two_sided(*table)
    assert 0 < p <= 1
    # Swapping the arms, or passes with failures, is the same question.
    assert p == fisher_two_sided(passed_b, trials_b, passed_a, trials_a)
    assert p == fisher_two_sided(trials_a - passed_a, trials_a, trials_b - passed_b, trials_b)


@given(tables(most=30))
def test_equal_rates_are_never_significant(table: tuple[int, int, int, int]) -> None:
    passed_a, trials_a, _, _ = table
    assert fisher_two_sided(passed_a, trials_a, passed_a, trials_a) == 1 or trials_a == 0


@given(st.integers(1, 6), st.integers(1, 6))
def test_smallest_p_is_the_smallest_over_every_outcome(trials_a: int, trials_b: int) -> None:
    every = [
        fisher_two_sided(a, trials_a, b, trials_b) for a in range(trials_a + 1) for b in range(trials_b + 1)
    ]
    assert smallest_two_sided_p(trials_a, trials_b) == min(every)


def test_known_values() -> None:
    # R: fisher.test(matrix(c(9, 1, 3, 7), 2))$p.value == 0.01977...
    assert float(fisher_two_sided(9, 10, 3, 10)) == pytest.approx(0.019766611, rel=1e-8)
    # 3/3 against 0/3: two tables of 20 are this extreme, one each way.
    assert fisher_two_sided(3, 3, 0, 3) == Fraction(2, 20)
    assert smallest_two_sided_p(3, 3) == Fraction(1, 10)
    assert smallest_two_sided_p(4, 4) == Fraction(2, 70)


def test_bad_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="arm a"):
        fisher_two_sided(4, 3, 0, 3)
    with pytest.raises(ValueError, match="arm b"):
        fisher_two_sided(0, 3, -1, 3)


def float_fisher(passed_a: int, trials_a: int, passed_b: int, trials_b: int) -> float:
    """R's ``fisher.test`` two-sided rule in floating point: tables up to 1 + 1e-7 times the observed."""
    passes, total = passed_a + passed_b, trials_a + trials_b
    low, high = max(0, passes - trials_b), min(trials_a, passes)
    density = {
        x: math.comb(trials_a, x) * math.comb(trials_b, passes - x) / math.comb(total, passes)
        for x in range(low, high + 1)
    }
    observed = density[passed_a]
    return sum(d for d in density.values() if d <= observed * (1 + 1e-7))


@given(tables(most=40))
@settings(max_examples=300)
def test_matches_the_floating_point_rule_of_r_on_larger_tables(table: tuple[int, int, int, int]) -> None:
    _, trials_a, _, trials_b = table
    assume(0 not in (trials_a, trials_b))
    assert float(fisher_two_sided(*table)) == pytest.approx(min(1.0, float_fisher(*table)), rel=1e-9)


def test_published_values() -> None:
    # Fisher's tea-tasting table, 3/4 against 1/4: R's fisher.test gives 0.4857 (= 34/70).
    assert fisher_two_sided(3, 4, 1, 4) == Fraction(34, 70)
    # The docs' examples: 6/6 against 0/6 and 4/4 against 0/4.
    assert float(fisher_two_sided(6, 6, 0, 6)) == pytest.approx(0.0021645, rel=1e-4)
    assert float(fisher_two_sided(4, 4, 0, 4)) == pytest.approx(0.028571, rel=1e-4)
