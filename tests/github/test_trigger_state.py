"""Trigger scores travel through ci.json to the publish step: checked on the way in, one group per pair."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from trialbook.errors import UsageError
from trialbook.github._state import CiState, merge_states, state_from_json, state_to_json
from trialbook.report.markdown import render_summary
from trialbook.report.suite_view import Review
from trialbook.runner._triggers import TriggerGroup
from trialbook.triggers import QueryCounts


def _group(missing: tuple[str, ...] = ()) -> dict[str, Any]:
    queries = (QueryCounts("staging", "should", 3, 0), QueryCounts("tests", "should_not", 1, 2))
    return dict(TriggerGroup("deploy", "codex", "deploy", queries, missing, 0.9, None).to_json())


def _state(*groups: dict[str, Any]) -> CiState:
    review = Review(triggers=list(groups))
    return CiState(reason="test", ran=True, comment=True, push=False, exit_code=0, review=review)


def test_trigger_groups_survive_ci_json_and_shards_keep_the_one_that_ran() -> None:
    whole, partial = _group(), _group(missing=("staging", "tests"))
    assert state_from_json(state_to_json(_state(whole)), "ci.json").review.triggers == [whole]
    merged = merge_states([_state(partial), _state(whole)])
    assert merged.review.triggers == [whole]


@pytest.mark.parametrize(
    "damage",
    [
        lambda g: g.update(verdict="pass\n::error::x"),
        lambda g: g["score"]["recall"].update(hits=-1),
        lambda g: g["score"].update(recall="1.0"),
        lambda g: g.update(eval=["deploy"]),
        lambda g: g.update(base={"score": g["score"], "recall_p": "small", "precision_p": 1, "flipped": []}),
    ],
)
def test_a_damaged_trigger_group_is_refused(damage: Any) -> None:
    data = state_to_json(_state(_group()))
    group = copy.deepcopy(data["review"]["triggers"][0])
    damage(group)
    data["review"]["triggers"] = [group]
    with pytest.raises(UsageError, match=r"ci\.json"):
        state_from_json(data, "ci.json")


def test_the_summary_has_a_triggering_section_only_with_trigger_evals() -> None:
    summary = render_summary([], triggers=[_group()])
    assert "### Skill triggering" in summary
    assert "- deploy × codex, skill deploy: recall 1.00 (3/3) · precision 0.75 (3/4)" in summary
    assert "fail (precision" not in summary and "pass" in summary  # min_recall 0.9 only
    assert "Skill triggering" not in render_summary([])
