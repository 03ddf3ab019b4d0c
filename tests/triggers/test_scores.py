"""Trigger scores: the confusion table, its rates with intervals, and where the state comes from."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trialbook.assertions import trigger_state
from trialbook.evidence import AgentResult, InstructionLoad, ToolCall, Turn, UsageEntry
from trialbook.triggers import QueryCounts, score

_COUNTS = st.builds(
    QueryCounts,
    query_id=st.text(min_size=1, max_size=5),
    expect=st.sampled_from(["should", "should_not"]),
    triggered=st.integers(0, 20),
    not_triggered=st.integers(0, 20),
    unknown=st.integers(0, 5),
    split=st.sampled_from([None, "train", "holdout"]),
)


@given(st.lists(_COUNTS, max_size=12))
def test_every_trial_lands_in_exactly_one_cell_and_rates_stay_inside_their_intervals(
    queries: list[QueryCounts],
) -> None:
    table = score(queries)
    assert table.tp + table.fn + table.fp + table.tn + table.unknown == sum(
        q.triggered + q.not_triggered + q.unknown for q in queries
    )
    for rate in (table.precision, table.recall, table.accuracy):
        shown = rate.to_json()
        if rate.total == 0:
            assert shown["value"] is None and shown["low"] is None  # unknown, never 0
        else:
            assert shown["low"] <= shown["value"] <= shown["high"]  # type: ignore[operator]
    if table.f1 is not None:
        assert 0 <= table.f1 <= 1
    held = score(queries, "holdout")
    assert held.tp <= table.tp and held.fp <= table.fp


def test_the_table_counts_trials_by_label() -> None:
    table = score(
        [
            QueryCounts("a", "should", triggered=3, not_triggered=1),
            QueryCounts("b", "should_not", triggered=1, not_triggered=2, unknown=1),
        ]
    )
    assert (table.tp, table.fn, table.fp, table.tn, table.unknown) == (3, 1, 1, 2, 1)
    assert table.recall.text() == "0.75 (3/4)"
    assert table.precision.text() == "0.75 (3/4)"
    assert table.f1 == 0.75
    assert score([QueryCounts("a", "should", 0, 3)]).precision.text() == "n/a (0/0)"
    assert score([QueryCounts("a", "should", 0, 3)]).f1 is None


def _result(
    *calls: ToolCall,
    model: str | None = "gpt-5.5",
    skill_path: str | None = None,
    usage: tuple[UsageEntry, ...] = (),
) -> AgentResult:
    rows = () if skill_path is None else (InstructionLoad(skill_path, "skill", "0" * 64, None),)
    return AgentResult(
        agent_name="codex",
        agent_version="1",
        success=True,
        error=None,
        stop_reason="completed",
        turns=(Turn(role="user", content="Ship it"),),
        all_tool_calls=calls,
        model_used=model,
        usage=usage,
        instructions_loaded=rows,
    )


def _call(name: str, arguments: dict[str, object]) -> ToolCall:
    return ToolCall("c1", name, arguments, True, True, "", None)  # type: ignore[arg-type]


def test_a_skill_tool_call_or_a_read_of_skill_md_triggers_and_other_calls_do_not() -> None:
    assert trigger_state(_result(_call("Skill", {"skill": "deploy"})), "deploy")[0] is True
    assert trigger_state(_result(_call("skill", {"skill": "/deploy"})), "deploy")[0] is True
    read = _call("exec_command", {"cmd": "cat .agents/skills/deploy/SKILL.md"})
    assert trigger_state(_result(read, skill_path=".agents/skills/deploy"), "deploy")[0] is True
    state, why = trigger_state(_result(_call("exec_command", {"cmd": "ls"})), "deploy")
    assert state is False and "exec_command" in why
    assert trigger_state(_result(_call("Skill", {"skill": "other"})), "deploy")[0] is False


def test_no_model_answer_is_unknown_not_a_miss() -> None:
    state, why = trigger_state(_result(model=None), "deploy")
    assert state is None and why.startswith("unknown")
    # Tokens were spent, so a model answered even though the agent did not name it: a decision was made.
    spent = UsageEntry(None, 100, 20, None, None, None, None, None)
    assert trigger_state(_result(model=None, usage=(spent,)), "deploy")[0] is False
