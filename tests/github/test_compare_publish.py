"""The with/without comparison travels through ci.json to the summary and the sticky comment."""

from __future__ import annotations

import pytest

from trialbook.errors import UsageError
from trialbook.github._state import CiState, merge_states, state_from_json, state_to_json
from trialbook.report import ReviewRow
from trialbook.report.markdown import render_pr_comment, render_summary
from trialbook.report.suite_view import Review
from trialbook.scoring.comparison import ComparedPair, Comparison

HELPS = ComparedPair(
    "deploy",
    "claude-code",
    Comparison(
        with_passed=9, with_trials=10, without_passed=3, without_trials=10, dropped=("CLAUDE.md",), loaded=10
    ),
)
UNKNOWN = ComparedPair(
    "deploy", "codex", Comparison(with_passed=4, with_trials=10, without_passed=3, without_trials=10)
)


def _row(agent: str) -> ReviewRow:
    return ReviewRow(
        eval_id="deploy",
        agent=agent,
        passed=9,
        trials=10,
        verdict="pass",
        base=None,
        cost_usd=None,
        duration_s=1.0,
    )


def _state(*pairs: ComparedPair) -> CiState:
    review = Review(rows=[_row(p.agent) for p in pairs], comparisons=list(pairs))
    return CiState(reason="test", ran=True, comment=True, push=False, exit_code=0, review=review)


def test_comparisons_survive_ci_json_and_shards_merge() -> None:
    one, two = _state(HELPS), _state(UNKNOWN)
    back = state_from_json(state_to_json(one), "ci.json")
    assert back.review.comparisons == [HELPS]
    merged = merge_states([one, two])
    assert merged.review.comparisons == [HELPS, UNKNOWN]


def test_an_older_ci_json_without_comparisons_still_reads() -> None:
    data = state_to_json(_state(HELPS))
    del data["review"]["comparisons"]
    assert state_from_json(data, "ci.json").review.comparisons == []


def test_a_damaged_comparison_is_a_clear_error() -> None:
    data = state_to_json(_state(HELPS))
    data["review"]["comparisons"][0]["with"] = {"passed": 11, "trials": 10}
    with pytest.raises(UsageError, match=r"ci\.json: damaged ci\.json"):
        state_from_json(data, "ci.json")


def test_the_summary_and_comment_show_each_comparison_once() -> None:
    summary = render_summary([_row("claude-code"), _row("codex")], comparisons=[HELPS, UNKNOWN])
    assert "### With and without" in summary
    assert "- deploy × claude-code: with 9/10 (loaded 10/10) · without 3/10 · helps, p = 0.0198" in summary
    assert (
        "- deploy × codex: with 4/10 (loaded ?/10) · without 3/10 · no significant difference, p = 1"
        in summary
    )
    assert "two-sided Fisher exact test" in summary and "p ≤ 0.05" in summary
    comment = render_pr_comment([_row("claude-code")], comparisons=[HELPS])
    assert comment.count("helps, p = 0.0198") == 1


def test_nothing_is_added_without_comparisons() -> None:
    assert "With and without" not in render_summary([_row("codex")])
