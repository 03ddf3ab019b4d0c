"""The judge panel's pure rules: strict answers, majority and unanimous, pairwise ties, calibration."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from trialbook.assertions._panel import (
    Answer,
    Rule,
    calibration_misses,
    pairwise,
    panel_verdict,
    parse_answer,
    parse_preference,
    tally_pairwise,
)

PASS = Answer("pass", "meets the rubric")
FAIL = Answer("fail", "misses the rubric")
GARBAGE = parse_answer("Sure! The answer looks great, I would say it passes.")


def test_a_well_formed_answer_is_read() -> None:
    assert parse_answer('{"verdict": "pass", "reason": "ok"}') == Answer("pass", "ok")
    assert parse_answer('```json\n{"verdict": "fail", "reason": "no"}\n```') == Answer("fail", "no")


def test_garbage_is_an_error_never_a_pass() -> None:
    assert GARBAGE.verdict is None and GARBAGE.error
    for text in (
        None,
        "",
        "pass",
        '{"verdict": "pass"}',
        '{"verdict": "PASS", "reason": "x"}',
        '{"verdict": "pass", "reason": "x", "score": 1}',
        '{"verdict": true, "reason": "x"}',
        '{"verdict": "pass", "reason": 3}',
        '["pass", "x"]',
        'Here it is: {"verdict": "pass", "reason": "x"}',
    ):
        answer = parse_answer(text)
        assert answer.verdict is None, text
        assert answer.error, text


@given(st.text())
def test_no_text_but_the_exact_shape_passes(text: str) -> None:
    answer = parse_answer(text)
    if answer.verdict == "pass":
        body = text.strip().removeprefix("```").removesuffix("```").strip().removeprefix("json")
        value = json.loads(body)
        assert set(value) == {"verdict", "reason"} and value["verdict"] == "pass"


def test_majority_follows_the_rubric_judge_against_one_dissent() -> None:
    assert panel_verdict([FAIL, PASS, FAIL], "majority") == "fail"
    assert panel_verdict([PASS, PASS, FAIL], "majority") == "pass"
    assert panel_verdict([PASS, FAIL], "majority") == "tie"


def test_unanimous_needs_every_judge() -> None:
    assert panel_verdict([PASS, PASS], "unanimous") == "pass"
    assert panel_verdict([PASS, FAIL], "unanimous") == "fail"
    assert panel_verdict([PASS, GARBAGE], "unanimous") == "error"


def test_errors_never_make_a_majority_pass() -> None:
    assert panel_verdict([PASS, GARBAGE, GARBAGE], "majority") == "error"
    assert panel_verdict([GARBAGE], "majority") == "error"
    assert panel_verdict([], "majority") == "error"


@given(st.lists(st.sampled_from([PASS, FAIL, GARBAGE]), min_size=1, max_size=7))
def test_a_pass_always_has_more_passing_judges_than_half(answers: list[Answer]) -> None:
    rules: tuple[Rule, ...] = ("majority", "unanimous")
    for rule in rules:
        if panel_verdict(answers, rule) == "pass":
            assert sum(a is PASS for a in answers) * 2 > len(answers)


def test_a_verdict_that_flips_with_the_order_is_a_tie() -> None:
    assert pairwise(PASS, PASS) == "tie"  # always prefers the first response
    assert pairwise(FAIL, FAIL) == "tie"  # always prefers the second
    assert pairwise(PASS, FAIL) == "pass"
    assert pairwise(FAIL, PASS) == "fail"
    assert pairwise(PASS, GARBAGE) is None


def test_an_always_pass_panel_fails_calibration() -> None:
    expected = ["pass", "fail", "fail"]
    always = [panel_verdict([PASS], "majority") for _ in expected]
    assert calibration_misses(expected, always) == (1, 2)  # type: ignore[arg-type]
    following = [panel_verdict([answer], "majority") for answer in (PASS, FAIL, FAIL)]
    assert calibration_misses(expected, following) == ()  # type: ignore[arg-type]
    assert calibration_misses(["pass"], ["error"]) == (0,)


def test_a_preference_is_read_strictly() -> None:
    assert parse_preference('{"better": "first", "reason": "r"}') == Answer("pass", "r")
    assert parse_preference('```json\n{"better": "second", "reason": "r"}\n```') == Answer("fail", "r")
    for garbage in (
        None,
        "The first one, clearly.",
        '{"better": "both", "reason": "r"}',
        '{"better": 1, "reason": "r"}',
        '{"verdict": "pass", "reason": "r"}',
        '{"better": "first", "reason": "r", "confidence": 0.9}',
        '{"better": "first", "reason": 3}',
    ):
        answer = parse_preference(garbage)
        assert answer.verdict is None and answer.error, garbage


def test_pairwise_decisions_are_counted_and_a_position_bias_is_a_tie() -> None:
    first = parse_preference('{"better": "first", "reason": "r"}')
    second = parse_preference('{"better": "second", "reason": "r"}')
    garbage = parse_preference("no idea")
    decisions = [
        pairwise(first, second),  # the with arm won in both orders
        pairwise(second, first),  # the without arm won in both orders
        pairwise(first, first),  # always the first shown: a tie
        pairwise(first, garbage),  # an error, never a preference
    ]
    tally = tally_pairwise(decisions)
    assert (tally.with_preferred, tally.without_preferred, tally.ties, tally.errors) == (1, 1, 1, 1)
