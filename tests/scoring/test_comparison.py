"""The with/without comparison: its verdict word, its sentence, its JSON, and unknown loading."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook.scoring.comparison import (
    COMPARE_ALPHA,
    Comparison,
    PairwiseJudged,
    format_p_value,
    loaded_counts,
)


def test_the_issue_example_helps() -> None:
    c = Comparison(with_passed=9, with_trials=10, without_passed=3, without_trials=10, loaded=10)
    assert c.effect == "helps"
    assert c.text() == "with 9/10 (loaded 10/10) · without 3/10 · helps, p = 0.0198"


def test_a_significant_drop_hurts() -> None:
    c = Comparison(with_passed=0, with_trials=8, without_passed=7, without_trials=8)
    assert c.effect == "hurts"
    assert "hurts, p = " in c.text()


def test_a_small_difference_is_no_significant_difference() -> None:
    c = Comparison(with_passed=6, with_trials=10, without_passed=4, without_trials=10, loaded=10)
    assert c.effect == "no significant difference"
    assert c.decidable


def test_too_few_trials_say_so() -> None:
    c = Comparison(with_passed=3, with_trials=3, without_passed=0, without_trials=3)
    assert c.effect == "no significant difference"
    assert not c.decidable
    assert c.text().endswith("(too few trials to reach p ≤ 0.05)")


def test_the_alpha_is_inclusive_and_configurable() -> None:
    # 4/4 against 0/4: p = 2/70 ≈ 0.0286.
    assert Comparison(with_passed=4, with_trials=4, without_passed=0, without_trials=4).effect == "helps"
    strict = Comparison(with_passed=4, with_trials=4, without_passed=0, without_trials=4, alpha=0.01)
    assert strict.effect == "no significant difference"
    assert COMPARE_ALPHA == 0.05


def test_unknown_loading_is_never_counted_as_loaded() -> None:
    assert loaded_counts([True, None, False, None]) == (1, 2)
    none_known = Comparison(
        with_passed=2, with_trials=2, without_passed=0, without_trials=2, loaded=0, loaded_unknown=2
    )
    assert none_known.loaded_text() == "loaded ?/2"
    some = Comparison(
        with_passed=2, with_trials=3, without_passed=0, without_trials=3, loaded=1, loaded_unknown=1
    )
    assert some.loaded_text() == "loaded 1/3, 1 unknown"
    assert (
        Comparison(with_passed=1, with_trials=2, without_passed=0, without_trials=2).loaded_text()
        == "loaded ?/2"
    )


def test_an_arm_without_trials_has_no_p_value() -> None:
    c = Comparison(with_passed=2, with_trials=2, without_passed=0, without_trials=0)
    assert c.to_json()["p_value"] is None
    assert c.effect == "no significant difference"
    assert "p =" not in c.text()


def test_impossible_counts_are_refused() -> None:
    with pytest.raises(ValueError, match="without arm"):
        Comparison(with_passed=1, with_trials=2, without_passed=3, without_trials=2)
    with pytest.raises(ValueError, match="loaded"):
        Comparison(with_passed=1, with_trials=2, without_passed=0, without_trials=2, loaded=3)
    with pytest.raises(ValueError, match="alpha"):
        Comparison(with_passed=1, with_trials=2, without_passed=0, without_trials=2, alpha=0)


def test_p_values_are_written_readably() -> None:
    assert format_p_value(0.0000108) == "p < 0.001"
    assert format_p_value(0.0198) == "p = 0.0198"
    assert format_p_value(1.0) == "p = 1"


@st.composite
def comparisons(draw: st.DrawFn) -> Comparison:
    with_trials, without_trials = draw(st.integers(0, 25)), draw(st.integers(0, 25))
    known = draw(st.booleans())
    unknown = draw(st.integers(0, with_trials))
    return Comparison(
        with_passed=draw(st.integers(0, with_trials)),
        with_trials=with_trials,
        without_passed=draw(st.integers(0, without_trials)),
        without_trials=without_trials,
        dropped=tuple(draw(st.lists(st.text(min_size=1, max_size=8), max_size=3))),
        loaded=draw(st.integers(0, with_trials - unknown)) if known else None,
        loaded_unknown=unknown if known else 0,
        alpha=draw(st.sampled_from([0.01, 0.05, 0.1])),
        pairwise=draw(st.none() | pairwise_judged()),
    )


@st.composite
def pairwise_judged(draw: st.DrawFn) -> PairwiseJudged:
    count = st.integers(0, 9)
    cost = draw(st.none() | st.floats(0, 5, allow_nan=False))
    return PairwiseJudged(draw(count), draw(count), draw(count), draw(count), draw(count), cost)


@given(comparisons())
def test_json_round_trips_and_the_word_follows_the_direction(c: Comparison) -> None:
    assert Comparison.from_json(c.to_json()) == c
    if c.effect == "helps":
        assert c.with_passed * c.without_trials > c.without_passed * c.with_trials
    if c.effect == "hurts":
        assert c.with_passed * c.without_trials < c.without_passed * c.with_trials
    if c.effect != "no significant difference":
        assert c.decidable and c.p_value <= c.alpha


@given(
    st.dictionaries(
        st.sampled_from(["with", "without", "alpha", "loaded", "dropped"]),
        st.integers() | st.none() | st.text(),
    )
)
def test_garbage_json_reads_as_none_never_raises(value: dict[str, object]) -> None:
    assert Comparison.from_json(value) is None  # type: ignore[arg-type]


def test_pairwise_judges_are_reported_beside_the_pass_rates() -> None:
    judged = PairwiseJudged(2, 0, 1, 1, judge_calls=8, judge_cost_usd=None)
    c = Comparison(with_passed=2, with_trials=2, without_passed=0, without_trials=2, pairwise=judged)
    assert c.text().endswith("judges: with preferred 2, without preferred 0, 1 tie, 1 error")
    assert c.to_json()["pairwise"] == {
        "with_preferred": 2,
        "without_preferred": 0,
        "ties": 1,
        "errors": 1,
        "judge_calls": 8,
        "judge_cost_usd": None,  # unknown stays unknown
    }
    assert (
        Comparison(with_passed=1, with_trials=1, without_passed=1, without_trials=1).to_json()["pairwise"]
        is None
    )
