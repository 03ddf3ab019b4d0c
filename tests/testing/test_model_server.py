"""``trialbook.testing.ModelServer`` over real HTTP: both wires, streamed or not, by position."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from trialbook.testing import ModelServer, Turn, hang, say, shell, use_tool


def sse(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in response.text.strip().split("\n\n"):
        name, data = block.split("\n", 1)
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_anthropic_streamed_and_not_say_the_same() -> None:
    script = [Turn(text="first", command="ls", tool_calls=(("Write", {"path": "a"}),)), say("done")]
    with ModelServer(script) as api:
        body = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
        streamed = sse(httpx.post(f"{api.url}/v1/messages", json={**body, "stream": True}))
        whole = httpx.post(f"{api.url}/v1/messages?beta=true", json=body).json()
        assert [r.path for r in api.model_requests()] == ["/v1/messages", "/v1/messages?beta=true"]
    assert streamed[0][0] == "message_start" and streamed[-1][0] == "message_stop"
    assert whole["stop_reason"] == "tool_use" and whole["usage"]["output_tokens"] == 30
    assert [(b["type"], b.get("text"), b.get("name"), b.get("input")) for b in whole["content"]] == [
        ("text", "first", None, None),
        ("tool_use", None, "Bash", {"command": "ls", "description": "run a command"}),
        ("tool_use", None, "Write", {"path": "a"}),
    ]
    ids = [b["id"] for b in whole["content"] if b["type"] == "tool_use"]
    assert len(set(ids)) == 2, "every tool call has its own id"


def test_responses_picks_the_reply_by_conversation_position_under_concurrency() -> None:
    script = [use_tool("bash", command="true"), say("second"), say("third")]
    with ModelServer(script) as api:

        def ask(outputs: int) -> dict[str, Any]:
            items = [
                {"type": "function_call_output", "call_id": f"c{i}", "output": ""} for i in range(outputs)
            ]
            reply: dict[str, Any] = httpx.post(
                f"{api.openai_url}/responses", json={"model": "m", "input": items}
            ).json()
            return reply

        with ThreadPoolExecutor(8) as pool:
            replies = list(pool.map(ask, [2, 0, 1] * 4))
    for outputs, reply in zip([2, 0, 1] * 4, replies, strict=True):
        kinds = [item["type"] for item in reply["output"]]
        if outputs == 0:
            assert kinds == ["function_call"] and reply["output"][0]["name"] == "bash"
        else:
            assert reply["output"][0]["content"][0]["text"] == ("second" if outputs == 1 else "third")
        assert reply["model"] == "m" and reply["usage"]["total_tokens"] == 150


def test_failures_routes_and_held_requests() -> None:
    with ModelServer([say("never")], fail_status=401) as api:
        refused = httpx.post(f"{api.openai_url}/responses", json={"input": [], "stream": True})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
        assert httpx.post(f"{api.url}/v1/other", json={}).status_code == 404
    held = ModelServer([hang()]).start()
    outcome: list[BaseException] = []

    def wait() -> None:
        try:
            httpx.post(f"{held.url}/v1/messages", json={"messages": []}, timeout=30)
        except httpx.HTTPError as exc:
            outcome.append(exc)

    waiter = threading.Thread(target=wait)
    waiter.start()
    while not held.requests:
        threading.Event().wait(0.01)
    held.stop()  # lets the held request go
    waiter.join(10)
    assert not waiter.is_alive() and outcome, "the held request ended without a reply"


def test_only_the_first_fail_times_requests_fail_and_the_rest_follow_the_script() -> None:
    with ModelServer([say("recovered")], fail_status=503, fail_times=2) as api:
        ask = {"input": [], "stream": False}
        statuses = [httpx.post(f"{api.openai_url}/responses", json=ask).status_code for _ in range(2)]
        answer = httpx.post(f"{api.openai_url}/responses", json=ask)
        assert statuses == [503, 503]
        assert answer.status_code == 200
        assert answer.json()["output"][0]["content"][0]["text"] == "recovered"
        assert httpx.post(f"{api.url}/v1/other", json={}).status_code == 404  # no model request: not counted
        assert httpx.post(f"{api.openai_url}/responses", json=ask).status_code == 200
        assert len(api.model_requests()) == 4


def test_settings_point_each_agent_here() -> None:
    with ModelServer([shell("true")], api_key="sk-mine") as api:
        assert api.claude_code_env() == {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-mine"}
        assert api.codex_options() == {"base_url": f"{api.url}/v1"}
        assert api.copilot_provider()["type"] == "anthropic"
        assert api.copilot_provider("responses")["wire_api"] == "responses"
    assert ModelServer().api_key != ModelServer().api_key, "a random key per server"


def test_a_marker_in_the_request_picks_its_own_script() -> None:
    with ModelServer([say("plain")], when={"FOLLOW-ME": [say("followed")]}) as api:
        plain = httpx.post(f"{api.url}/v1/messages", json={"system": "x", "messages": []}).json()
        marked = httpx.post(f"{api.url}/v1/messages", json={"system": "FOLLOW-ME", "messages": []}).json()
    assert plain["content"][0]["text"] == "plain" and marked["content"][0]["text"] == "followed"
