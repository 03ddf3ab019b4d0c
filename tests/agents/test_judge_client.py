"""Judges asked over real HTTP on loopback: verdicts, garbage, masking before the request, the cache."""

from __future__ import annotations

import json

from trialbook.agents.judge_client import JudgeClient, JudgeModel
from trialbook.assertions._panel import panel_verdict
from trialbook.masking import Masker
from trialbook.testing import ChatServer, ModelServer, Reply, say, text

PASS = '{"verdict": "pass", "reason": "it explains the failure"}'
FAIL = '{"verdict": "fail", "reason": "no explanation"}'
SECRET = "sk-live-0123456789abcdef0123"


def _follows_rubric(body: dict[str, object]) -> Reply:
    prompt = json.dumps(body)
    return text(PASS if "EXPLAINED-THE-FAILURE" in prompt else FAIL)


def test_a_panel_over_loopback_gives_the_expected_verdicts() -> None:
    with (
        ChatServer(_follows_rubric) as rubric,
        ModelServer([say(PASS)]) as always,
        ModelServer([say("I think this is fine!")]) as garbage,
    ):
        judges = [
            JudgeModel("openai", rubric.base_url, "gpt-5-mini", rubric.api_key),
            JudgeModel("anthropic", always.url, "claude-haiku-4.5", always.api_key),
            JudgeModel("anthropic", garbage.url, "claude-haiku-4.5", garbage.api_key),
        ]
        client = JudgeClient(Masker())
        bad = [client.ask(judge, "explain the failure", "it crashed") for judge in judges]
        good = [client.ask(judge, "explain the failure", "EXPLAINED-THE-FAILURE: x") for judge in judges]
    assert [call.parsed.verdict for call in bad] == ["fail", "pass", None]
    assert bad[2].parsed.error and bad[2].answer == "I think this is fine!"
    assert panel_verdict([c.parsed for c in bad], "majority") == "error"  # garbage never tips it to pass
    assert panel_verdict([c.parsed for c in bad], "unanimous") == "fail"
    assert panel_verdict([c.parsed for c in good], "majority") == "pass"
    assert panel_verdict([c.parsed for c in good], "unanimous") == "error"
    assert panel_verdict([c.parsed for c in good[:2]], "unanimous") == "pass"
    assert bad[0].input_tokens == 100 and bad[0].output_tokens == 10
    assert bad[0].cost_usd is not None and bad[0].cost_usd > 0


def test_a_secret_in_the_shown_file_never_reaches_the_judge() -> None:
    head = ".env: TOKEN=" + SECRET + "\n"
    shown = head + "x" * (99_990 - len(head)) + SECRET  # the cut falls inside the second secret
    with ModelServer([say(PASS)]) as server:
        client = JudgeClient(Masker([SECRET]))
        call = client.ask(JudgeModel("anthropic", server.url, "m"), "rubric " + SECRET, shown)
        raw = json.dumps([request.body for request in server.requests])
    assert call.parsed.verdict == "pass"
    assert SECRET not in raw and SECRET[:10] not in raw


def test_the_same_input_is_asked_once() -> None:
    with ModelServer([say(PASS)]) as server:
        client = JudgeClient(Masker())
        judge = JudgeModel("anthropic", server.url, "m")
        first = client.ask(judge, "r", "shown")
        second = client.ask(judge, "r", "shown")
        third = client.ask(judge, "r", "shown differently")
        count = len(server.model_requests())
    assert count == 2
    assert second.cached and not first.cached and not third.cached
    assert second.input_sha256 == first.input_sha256 != third.input_sha256


def test_an_unreachable_judge_is_an_error() -> None:
    with ModelServer([say(PASS)]) as server:
        url = server.url
    call = JudgeClient(Masker()).ask(JudgeModel("anthropic", url, "m"), "r", "s")
    assert call.parsed.verdict is None and call.parsed.error
