"""The event mapper against event sequences recorded from the real CLI, and edits of them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from trialbook.agents.copilot import EventMapper

DATA = Path(__file__).resolve().parents[2] / "data" / "copilot"


def recorded(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / f"{name}.jsonl").read_text().splitlines()]


def mapped(events: list[dict[str, Any]]) -> EventMapper:
    mapper = EventMapper()
    for event in events:
        mapper.feed(event)
    mapper.close()
    return mapper


def first(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(e for e in events if e["type"] == kind)


def test_a_recorded_bash_run_maps_to_one_complete_call() -> None:
    mapper = mapped(recorded("bash"))
    root = mapper.trajectories[""]
    [call] = root.tool_calls()
    assert call.name == "bash" and call.completion_received is True and call.success is True
    assert call.result is not None and call.evidence_complete
    assert root.capture_errors == []
    assert [t.role for t in root.turns] == ["user", "assistant", "assistant"]
    assert root.turns[1].content is None and root.turns[1].tool_call_ids == (call.call_id,)
    assert [u.input_tokens for u in root.usage] == [100, 100]
    assert root.usage[0].reasoning_tokens is None  # not reported by this provider: unknown, not zero
    assert mapper.idle and not mapper.aborted
    assert mapper.premium_by_agent[""] == 0.0
    assert mapper.copilot_version == "1.0.102"


def test_unknown_event_types_are_kept_but_not_interpreted() -> None:
    events = recorded("bash")
    assert any(e["type"].startswith("model.") for e in events)
    events.insert(5, {"type": "brand.new_event", "id": "x-1", "data": {"toolCallId": "call_zzz"}})
    mapper = mapped(events)
    assert mapper.trajectories[""].capture_errors == []
    assert {"type": "brand.new_event", "id": "x-1", "data": {"toolCallId": "call_zzz"}} in mapper.events


def test_an_exact_duplicate_is_dropped_and_a_conflicting_one_is_flagged() -> None:
    events = recorded("bash")
    complete = first(events, "tool.execution_complete")
    same = mapped([*events, copy.deepcopy(complete)])
    assert same.trajectories[""].capture_errors == [] and len(same.trajectories[""].calls) == 1

    changed = copy.deepcopy(complete)
    changed["data"]["result"]["content"] = "something else"
    conflict = mapped([*events, changed])
    [error] = conflict.trajectories[""].capture_errors
    assert "conflicting duplicate" in error
    assert conflict.trajectories[""].tool_calls()[0].result == complete["data"]["result"]["content"]

    second = copy.deepcopy(changed)
    second["id"] = "another-event-id"
    kept_first = mapped([*events, second])
    assert "conflicting completions" in kept_first.trajectories[""].capture_errors[0]


def test_a_missing_completion_and_an_uncorrelated_one_are_capture_errors() -> None:
    events = [e for e in recorded("bash") if e["type"] != "tool.execution_complete"]
    stray = copy.deepcopy(first(recorded("bash"), "tool.execution_complete"))
    stray["data"]["toolCallId"] = "call_nobody_started"
    mapper = mapped([*events, stray])
    errors = mapper.trajectories[""].capture_errors
    assert any("matches no started call" in e for e in errors)
    assert any("has no completion event" in e for e in errors)
    [call] = mapper.trajectories[""].tool_calls()
    assert call.completion_received is False and call.success is None and call.result is None


def test_a_start_without_call_id_is_unknown_rather_than_missing() -> None:
    events = recorded("bash")
    start = first(events, "tool.execution_start")
    del start["data"]["toolCallId"]
    mapper = mapped(events)
    calls = mapper.trajectories[""].tool_calls()
    assert calls[0].call_id is None and calls[0].completion_received is None
    assert any("without a call id" in e for e in mapper.trajectories[""].capture_errors)


def test_a_completion_without_output_is_incomplete_evidence_but_not_a_capture_error() -> None:
    events = recorded("bash")
    del first(events, "tool.execution_complete")["data"]["result"]
    mapper = mapped(events)
    [call] = mapper.trajectories[""].tool_calls()
    assert call.success is True and call.result is None and not call.evidence_complete
    assert mapper.trajectories[""].capture_errors == []


def test_an_interrupted_call_is_recorded_as_cancelled() -> None:
    mapper = mapped(recorded("timeout"))
    assert mapper.aborted
    [call] = mapper.trajectories[""].tool_calls()
    assert call.name == "wait" and call.completion_received is False
    assert mapper.trajectories[""].capture_errors == [f"tool call {call.call_id} (wait) was cancelled"]


def test_subagent_events_form_their_own_trajectory() -> None:
    mapper = mapped(recorded("subagent"))
    [invocation] = mapper.invocations
    assert invocation.name == "checker" and invocation.status == "completed"
    assert invocation.agent_id is not None and invocation.duration_ms is not None
    child = mapper.trajectories[invocation.agent_id]
    assert child.turns[0].role == "user" and child.turns[0].content == "check it"
    assert [c.name for c in mapper.trajectories[""].tool_calls()] == ["task"]
    assert "bash" in [c.name for c in child.tool_calls()]
    assert set(mapper.premium_by_agent) == {"", invocation.agent_id}


def test_a_subagent_that_never_finishes_is_marked() -> None:
    events = [e for e in recorded("subagent") if e["type"] != "subagent.completed"]
    mapper = mapped(events)
    assert mapper.invocations[0].status == "incomplete"


def test_an_image_that_does_not_decode_makes_the_evidence_incomplete_naming_its_index() -> None:
    events = recorded("bash")
    good = "iVBORw0KGgo="  # the PNG signature
    first(events, "tool.execution_complete")["data"]["result"]["binaryResultsForLlm"] = [
        {"type": "image", "data": good, "mimeType": "image/png"},
        {"type": "image", "data": "not base64 at all!", "mimeType": "image/jpeg"},
        {"type": "image", "mimeType": "image/gif"},
    ]
    mapper = mapped(events)
    root = mapper.trajectories[""]
    [call] = root.tool_calls()
    assert call.image_content == bytes.fromhex("89504e470d0a1a0a") and call.additional_images == ()
    assert root.capture_errors == [
        "tool call call_1 (bash): image result.binaryResultsForLlm[1] has no valid base64 data; "
        "it is not in the record",
        "tool call call_1 (bash): image result.binaryResultsForLlm[2] has no valid base64 data; "
        "it is not in the record",
    ]


def test_a_readable_copy_of_the_images_in_contents_is_the_record_and_no_gap() -> None:
    events = recorded("bash")
    result = first(events, "tool.execution_complete")["data"]["result"]
    result["binaryResultsForLlm"] = [{"type": "image", "data": "%%%", "mimeType": "image/png"}]
    result["contents"] = [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]
    mapper = mapped(events)
    [call] = mapper.trajectories[""].tool_calls()
    assert call.image_content == bytes.fromhex("89504e470d0a1a0a")
    assert mapper.trajectories[""].capture_errors == []
