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
