from pathlib import Path

import pytest

from trialbook.assertions import not_ran, ran, ran_in_order

from .dir_trial import DirTrial, make_calls

CALLS = make_calls(
    "neon auth",
    "neon init --org acme --project-id p1",
    "npm install",
    "neon deploy --prod",
)


def test_ran_passes_and_names_the_matching_calls(tmp_path: Path) -> None:
    record = ran("neon deploy").check(DirTrial(tmp_path, CALLS))
    assert record.passed
    assert record.kind == "ran"
    assert record.label == 'ran "neon deploy"'
    assert record.expected == 'a call matching "neon deploy"'
    assert record.actual == "matched:\n  4. neon deploy --prod (exit 0)"
    assert record.error is None


def test_ran_fails_and_lists_every_call_seen(tmp_path: Path) -> None:
    record = ran("neon delete").check(DirTrial(tmp_path, CALLS))
    assert not record.passed
    assert record.actual == (
        "no call matched; calls seen (4):\n"
        "  1. neon auth (exit 0)\n"
        "  2. neon init --org acme --project-id p1 (exit 0)\n"
        "  3. npm install (exit 0)\n"
        "  4. neon deploy --prod (exit 0)"
    )


def test_ran_with_no_calls_says_so(tmp_path: Path) -> None:
    record = ran("/neon/").check(DirTrial(tmp_path, ()))
    assert not record.passed
    assert record.actual == "no call matched; no shimmed call was recorded"


def test_not_ran_passes_when_nothing_matches(tmp_path: Path) -> None:
    record = not_ran("neon delete").check(DirTrial(tmp_path, CALLS))
    assert record.passed
    assert record.actual == "no call matched (4 calls seen)"


def test_not_ran_lists_the_matching_calls(tmp_path: Path) -> None:
    record = not_ran("/^neon (init|deploy)/").check(DirTrial(tmp_path, CALLS))
    assert not record.passed
    assert record.label == 'not_ran "/^neon (init|deploy)/"'
    assert (
        record.actual
        == "matched:\n  2. neon init --org acme --project-id p1 (exit 0)\n  4. neon deploy --prod (exit 0)"
    )


def test_ran_in_order_allows_calls_in_between(tmp_path: Path) -> None:
    assertion = ran_in_order(["/neon init .*--project-id/", "neon deploy"])
    assert assertion.label == 'ran_in_order ["/neon init .*--project-id/", "neon deploy"]'
    record = assertion.check(DirTrial(tmp_path, CALLS))
    assert record.passed
    assert record.actual == (
        "matched in order:\n  2. neon init --org acme --project-id p1 (exit 0)\n"
        "  4. neon deploy --prod (exit 0)"
    )


def test_ran_in_order_says_which_pattern_was_missing_after_which_call(tmp_path: Path) -> None:
    record = ran_in_order(["neon init", "neon deploy", "neon auth"]).check(DirTrial(tmp_path, CALLS))
    assert not record.passed
    assert (
        record.expected == 'calls matching "neon init", then "neon deploy", then "neon auth", in this order'
    )
    first_line, rest = record.actual.split("\n", 1)
    assert (
        first_line
        == '"neon auth" was not found after call 4 (neon deploy --prod); it matched only earlier, at call 1'
    )
    assert rest == (
        "calls seen (4):\n"
        "  1. neon auth (exit 0)\n"
        "  2. neon init --org acme --project-id p1 (exit 0)\n"
        "  3. npm install (exit 0)\n"
        "  4. neon deploy --prod (exit 0)"
    )


def test_ran_in_order_when_the_first_pattern_never_matches(tmp_path: Path) -> None:
    record = ran_in_order(["neon login", "neon deploy"]).check(DirTrial(tmp_path, CALLS))
    assert not record.passed
    assert record.actual.startswith(
        '"neon login" matched no call\ncalls seen (4):\n  1. neon auth (exit 0)\n'
    )


def test_ran_in_order_needs_each_step_on_a_later_call(tmp_path: Path) -> None:
    calls = make_calls("neon deploy")
    assert not ran_in_order(["neon deploy", "neon deploy"]).check(DirTrial(tmp_path, calls)).passed
    twice = make_calls("neon deploy", "neon deploy")
    assert ran_in_order(["neon deploy", "neon deploy"]).check(DirTrial(tmp_path, twice)).passed


@pytest.mark.parametrize(("patterns", "message"), [([], "at least one pattern"), ("neon", "not one string")])
def test_ran_in_order_rejects_what_is_not_a_list_of_patterns(patterns: list[str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ran_in_order(patterns)


def test_to_json_describes_the_patterns() -> None:
    assert ran("neon deploy").to_json() == {"kind": "ran", "pattern": "neon deploy"}
    assert not_ran("/x/").to_json() == {"kind": "not_ran", "pattern": "/x/"}
    assert ran_in_order(["a", "/b/"]).to_json() == {"kind": "ran_in_order", "patterns": ["a", "/b/"]}
