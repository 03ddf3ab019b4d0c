"""Request audit records read from outgoing bodies; unreadable shapes are refused."""

from __future__ import annotations

import hashlib
import json

import pytest

from trialbook.agents.copilot import audit_body
from trialbook.agents.copilot._audit import UnsupportedRequestError
from trialbook.agents.copilot._forward import audit_ws_message
from trialbook.evidence import JsonValue


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_chat_completions() -> None:
    body: JsonValue = {
        "model": "gpt-x",
        "reasoning_effort": "high",
        "messages": [
            {"role": "system", "content": "A"},
            {"role": "developer", "content": [{"type": "text", "text": "B"}, {"type": "text", "text": "C"}]},
            {
                "role": "user",
                "content": [
                    {"type": "image_url", "image_url": {"url": "data:", "detail": "low"}},
                    {"type": "image_url", "image_url": {"url": "data:"}},
                ],
            },
        ],
        "tools": [
            {"type": "function", "function": {"name": "bash"}},
            {"type": "function", "function": {"name": "view"}},
        ],
    }
    record = audit_body(body, "req-1")
    assert record.request_id == "req-1" and record.model == "gpt-x" and record.reasoning_effort == "high"
    assert record.tool_names == ("bash", "view")
    assert record.image_details == ("low", None) and record.image_count == 2
    assert record.instructions_sha256 == sha("A\n\nB\n\nC")


def test_responses_instructions_come_first() -> None:
    body: JsonValue = {
        "model": "m",
        "instructions": "TOP",
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "DEV"}]},
            {"role": "user", "content": [{"type": "input_image", "detail": "high"}]},
        ],
        "reasoning": {"effort": "low"},
        "tools": [{"type": "function", "name": "bash"}, {"type": "web_search"}],
    }
    record = audit_body(body, None)
    assert record.instructions_sha256 == sha("TOP\n\nDEV")
    assert record.tool_names == ("bash",) and record.reasoning_effort == "low"
    assert record.image_details == ("high",)


def test_anthropic_messages_and_empty_instructions() -> None:
    record = audit_body(
        {"model": "c", "messages": [{"role": "user", "content": "hi"}]}, "r", path="/v1/messages"
    )
    assert record.instructions_sha256 == sha("") and record.reasoning_effort is None
    record = audit_body({"system": [{"type": "text", "text": "S"}], "messages": []}, "r", path="/v1/messages")
    assert record.instructions_sha256 == sha("S") and record.model is None


@pytest.mark.parametrize(
    "body", [[], {"prompt": "legacy"}, {"messages": "nope"}, {"messages": [1]}, {"messages": [], "tools": {}}]
)
def test_unsupported_shapes_are_refused(body: object) -> None:
    with pytest.raises(UnsupportedRequestError):
        audit_body(body, "r")  # type: ignore[arg-type]


CREATE = {
    "type": "response.create",
    "model": "m",
    "instructions": "Be brief.",
    "tools": [],
    "input": [{"role": "user", "content": "x"}],
}


def test_websocket_messages_only_response_create_passes() -> None:
    assert audit_ws_message(json.dumps(CREATE), "conn-1").request_id == "conn-1"
    with pytest.raises(UnsupportedRequestError, match=r"not response\.create"):
        audit_ws_message(json.dumps({"type": "session.update"}), "conn-1")
    with pytest.raises(UnsupportedRequestError, match="not JSON"):
        audit_ws_message(b"\x00", "conn-1")


@pytest.mark.parametrize(
    ("leave_out", "named"),
    [
        (("model",), "'model'"),
        (("instructions",), "'instructions'"),
        (("tools",), "'tools'"),
        (("model", "instructions", "tools"), "'model', 'instructions', 'tools'"),
    ],
)
def test_a_continuation_that_leaves_settings_to_the_connection_is_refused(
    leave_out: tuple[str, ...], named: str
) -> None:
    message = {k: v for k, v in CREATE.items() if k not in leave_out} | {"previous_response_id": "resp_1"}
    with pytest.raises(UnsupportedRequestError, match=f"continuation of resp_1 does not state {named}"):
        audit_ws_message(json.dumps(message), "conn-1")


def test_empty_settings_are_not_stated_settings() -> None:
    for empty in ({"model": ""}, {"instructions": ""}, {"model": None}, {"tools": None}):
        with pytest.raises(UnsupportedRequestError, match="does not state"):
            audit_ws_message(json.dumps(CREATE | empty), "conn-1")
    developer = {k: v for k, v in CREATE.items() if k != "instructions"}
    developer["input"] = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "x"}]
    stated = audit_ws_message(json.dumps(developer), "conn-1")
    assert stated.instructions_sha256 == sha("Be brief.")
