"""The reading helpers on AgentResult: responses, tool calls, files and the cost estimate."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialbook.evidence import AgentResult, CopilotResult, SubagentInvocation, ToolCall, Turn, UsageEntry


def result(**fields: object) -> AgentResult:
    base: dict[str, object] = {
        "agent_name": "copilot",
        "agent_version": None,
        "success": True,
        "error": None,
        "stop_reason": "completed",
    }
    return AgentResult(**{**base, **fields})  # type: ignore[arg-type]


def usage(model: str | None, inp: int | None, out: int | None) -> UsageEntry:
    return UsageEntry(model, inp, out, None, None, None, None, None)


def test_final_response_is_the_last_assistant_text() -> None:
    turns = (
        Turn("user", "hi"),
        Turn("assistant", "first"),
        Turn("assistant", None, ("c-1",)),
        Turn("assistant", ""),
        Turn("user", "thanks"),
    )
    subject = result(turns=turns)
    assert subject.all_responses == ("first", "")
    assert subject.final_response == ""  # an empty reply is still a reply


def test_final_response_is_none_when_the_agent_said_nothing() -> None:
    subject = result(turns=(Turn("user", "hi"), Turn("assistant", None, ("c-1",))))
    assert subject.all_responses == ()
    assert subject.final_response is None


def test_tool_was_called_with_matches_a_subset_of_arguments() -> None:
    calls = (
        ToolCall("1", "transfer", {"amount": 100.0, "to": "B"}, True, True, "ok", None),
        ToolCall("2", "transfer", {"amount": 500.0, "to": "C"}, True, True, "ok", None),
        ToolCall("3", "get_balance", ["A"], True, True, "1000", None),
    )
    subject = result(all_tool_calls=calls)
    assert subject.tool_was_called_with("transfer", amount=500.0)
    assert subject.tool_was_called_with("transfer", amount=500.0, to="C")
    assert not subject.tool_was_called_with("transfer", amount=500.0, to="B")
    assert not subject.tool_was_called_with("transfer", memo="x")
    assert not subject.tool_was_called_with("get_balance", account="A")  # list arguments have no names
    assert subject.tool_was_called_with("transfer")  # no arguments given: any call of it counts
    assert not subject.tool_was_called_with("delete_account")
    assert subject.tool_call_count("transfer") == 2
    assert [c.call_id for c in subject.tool_calls_for("transfer")] == ["1", "2"]


def test_files_matching_walks_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "setup.py").write_text("", encoding="utf-8")
    (tmp_path / "src" / "app" / "main.py").write_text("print()", encoding="utf-8")
    (tmp_path / "src" / "README.md").write_text("# app", encoding="utf-8")
    subject = result(working_directory=str(tmp_path))
    assert subject.files_matching("**/*.py") == ("setup.py", "src/app/main.py")
    assert subject.files_matching("src/*.md") == ("src/README.md",)
    assert subject.files_matching("*.toml") == ()
    assert subject.file_exists("src/app/main.py")
    assert subject.file("src/README.md") == "# app"


def test_file_helpers_need_a_working_directory() -> None:
    with pytest.raises(ValueError, match="no working_directory"):
        result().files_matching("*")


def test_estimated_cost_names_unpriced_models_instead_of_pricing_them_at_zero() -> None:
    priced = result(usage=(usage("gpt-5", 1_000_000, 1_000_000),))
    assert priced.estimated_cost().usd == pytest.approx(1.25 + 10.0)
    assert priced.estimated_cost().unpriced_models == ()
    mixed = result(usage=(usage("gpt-5", 10, 10), usage("in-house", 10, 10), usage(None, 1, 1)))
    estimate = mixed.estimated_cost()
    assert estimate.usd is None
    assert estimate.unpriced_models == ("in-house", "<unknown model>")


def test_estimated_cost_is_unknown_when_counts_or_usage_are_missing() -> None:
    assert result(usage=(usage("gpt-5", None, 10),)).estimated_cost().usd is None
    assert result().estimated_cost().usd is None
    child = CopilotResult(agent_name="c", agent_version=None, success=True, error=None, stop_reason=None)
    parent = CopilotResult(
        agent_name="c",
        agent_version=None,
        success=True,
        error=None,
        stop_reason=None,
        usage=(usage("gpt-5", 10, 10),),
        subagent_invocations=(
            SubagentInvocation(
                invocation_id="i", name=None, status="completed", duration_ms=None, result=child
            ),
        ),
    )
    assert parent.estimated_cost().usd is None  # the child session reported no usage at all


def test_evidence_complete_looks_at_every_call_and_the_whole_tree() -> None:
    done = ToolCall("1", "x", {}, True, True, "", None)
    pending = ToolCall("2", "x", {}, False, None, None, None)
    image_only = ToolCall("3", "x", {}, True, True, None, None, image_content=b"\x00")
    assert done.evidence_complete
    assert image_only.evidence_complete
    assert not pending.evidence_complete
    assert result(all_tool_calls=(done, image_only)).evidence_complete
    assert not result(all_tool_calls=(done, pending)).evidence_complete
    assert not result(capture_errors=("uncorrelated completion",)).evidence_complete
    broken_child = CopilotResult(
        agent_name="c",
        agent_version=None,
        success=True,
        error=None,
        stop_reason=None,
        all_tool_calls=(pending,),
    )
    parent = CopilotResult(
        agent_name="c",
        agent_version=None,
        success=True,
        error=None,
        stop_reason=None,
        subagent_invocations=(
            SubagentInvocation(
                invocation_id="i", name=None, status="completed", duration_ms=None, result=broken_child
            ),
        ),
    )
    assert not parent.evidence_complete
