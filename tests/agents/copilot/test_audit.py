"""Request audit records read from outgoing bodies; unreadable shapes are refused."""

from __future__ import annotations

import hashlib
import json

import pytest

from trialbook.agents.copilot import audit_body
from trialbook.agents.copilot._audit import UnsupportedRequestError, audit_ws_message
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


def test_websocket_messages_only_response_create_passes() -> None:
    create = {"type": "response.create", "model": "m", "input": [{"role": "user", "content": "x"}]}
    assert audit_ws_message(json.dumps(create), "conn-1").request_id == "conn-1"
    with pytest.raises(UnsupportedRequestError, match=r"not response\.create"):
        audit_ws_message(json.dumps({"type": "session.update"}), "conn-1")
    with pytest.raises(UnsupportedRequestError, match="not JSON"):
        audit_ws_message(b"\x00", "conn-1")
