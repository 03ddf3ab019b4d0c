"""Claude Code's stream-json, recorded from the real CLI (tests/data/claude_code), read into evidence.

The recordings came from Claude Code 2.1.197 against the loopback fake model; edited variants (cut
streams, unknown events, broken correlation) are built from them below so each edit is visible here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trialbook.agents import AgentTask
from trialbook.agents._claude_stream import parse_claude_stream, plain_model
from trialbook.agents._cli_run import CliRun
from trialbook.agents.claude_code import _watch, claude_result
from trialbook.evidence import AgentResult, dump_result, load_result

DATA = Path(__file__).parent.parent / "data" / "claude_code"
PROMPT = "Write hi to out.txt then deploy"


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def _task(tmp_path: Path) -> AgentTask:
    return AgentTask(
        prompt=PROMPT, workdir=tmp_path, home=tmp_path, env={}, output_dir=tmp_path, timeout_s=30
    )


def _run(returncode: int | None = 0, *, timed_out: bool = False, aborted: str | None = None) -> CliRun:
    return CliRun((), "", returncode, timed_out, aborted, 1234.0)


def _result(lines: list[str], tmp_path: Path, run: CliRun | None = None) -> AgentResult:
    return claude_result(parse_claude_stream(lines), run or _run(), _task(tmp_path), probed_version="2.1.197")


def test_a_full_session_correlates_tool_calls_and_counts_cache_reads_as_input(tmp_path: Path) -> None:
    result = _result(_lines("tool_calls.jsonl"), tmp_path)
    assert result.success
    assert result.stop_reason == "completed"
    assert result.error is None
    first, second = result.all_tool_calls
    assert (first.call_id, first.name, first.success, first.result) == (
        "toolu_fake0001",
        "Bash",
        True,
        "(Bash completed with no output)",
    )
    assert first.arguments == {
        "command": "echo hi > out.txt && vendorcli deploy",
        "description": "run a command",
    }
    assert second.success is False
    assert second.result is None
    assert second.error == "Exit code 1\ncat: missing.txt: No such file or directory"
    # The first message arrived as two lines (text, then tool_use) with one id: one turn, not two.
    assert [(t.role, t.content, t.tool_call_ids) for t in result.turns] == [
        ("user", PROMPT, ()),
        ("assistant", "I will write the file, then deploy.", ("toolu_fake0001",)),
        ("assistant", None, ("toolu_fake0002",)),
        ("assistant", "Done: out.txt written and deployed.", ()),
    ]
    (usage,) = result.usage
    # modelUsage: 360 fresh input + 50 cache reads; trialbook's input count includes cache reads.
    assert (usage.model, usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (
        "claude-sonnet-5",
        410,
        50,
        0,
    )
    assert usage.output_tokens == 90
    assert result.cost_usd == pytest.approx(0.002445)
    assert result.model_used == "claude-sonnet-5"
    assert result.agent_version == "2.1.197"
    assert result.duration_ms == 233
    assert result.evidence_complete
    assert len(result.raw_events) == 8
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result


def test_per_line_usage_of_a_split_message_is_never_summed(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    per_line = [
        json.loads(line)["message"]["usage"]["input_tokens"] for line in lines if '"assistant"' in line[:30]
    ]
    assert len(per_line) == 4  # four assistant lines for three API messages
    result = _result(lines, tmp_path)
    assert result.total_input_tokens == 410
    assert result.total_output_tokens == 90


def test_max_turns_is_an_execution_error_that_keeps_its_usage(tmp_path: Path) -> None:
    result = _result(_lines("max_turns.jsonl"), tmp_path, _run(1))
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error == "error_max_turns: Reached maximum number of turns (1)"
    assert result.total_input_tokens == 120
    assert result.model_used == "claude-opus-4-8"
    assert result.all_tool_calls[0].completion_received is True


def test_a_budget_stop_reads_tokens_from_model_usage_when_usage_is_all_zeros(tmp_path: Path) -> None:
    result = _result(_lines("max_budget.jsonl"), tmp_path, _run(1))
    assert result.error == "error_max_budget_usd: Reached maximum budget ($0.001)"
    assert result.stop_reason == "execution_error"
    (usage,) = result.usage
    assert (usage.model, usage.input_tokens, usage.output_tokens) == ("claude-opus-4-8", 5000, 30)
    assert result.cost_usd == pytest.approx(0.02575)
    (call,) = result.all_tool_calls
    assert call.completion_received is False
    assert call.success is None
    assert not result.evidence_complete  # a requested call never ran: its evidence is missing


@pytest.mark.parametrize(
    ("name", "said"),
    [("not_logged_in.jsonl", "Not logged in"), ("auth_rejected.jsonl", "Invalid API key")],
)
def test_is_error_wins_over_a_success_subtype(tmp_path: Path, name: str, said: str) -> None:
    result = _result(_lines(name), tmp_path, _run(1))
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert result.error.startswith("success: ")
    assert said in result.error
    # The CLI's own synthetic message is not something the model said.
    assert result.final_response is None
    assert result.total_input_tokens == 0  # a known zero: no request was billed


def test_auth_error_names_the_http_status(tmp_path: Path) -> None:
    result = _result(_lines("auth_rejected.jsonl"), tmp_path, _run(1))
    assert result.error is not None
    assert result.error.endswith("(HTTP 401)")


def test_a_stream_cut_off_by_the_deadline_leaves_usage_and_cost_unknown(tmp_path: Path) -> None:
    result = _result(_lines("auth_retrying_cut_off.jsonl"), tmp_path, _run(None, timed_out=True))
    assert result.stop_reason == "timeout"
    assert not result.success
    assert result.usage == ()
    assert result.total_input_tokens is None
    assert result.total_tokens is None
    assert result.cost_usd is None
    assert result.agent_version == "2.1.197"
    assert "without a result event" in result.capture_errors[0]
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result


def test_a_deadline_wins_over_a_result_printed_while_shutting_down(tmp_path: Path) -> None:
    result = _result(_lines("tool_calls.jsonl"), tmp_path, _run(None, timed_out=True))
    assert result.stop_reason == "timeout"
    assert not result.success
    assert result.total_input_tokens == 410  # the counts it did report are real


def test_a_truncated_last_line_is_a_capture_error(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    cut = [*lines[:6], lines[6][:50]]
    result = _result(cut, tmp_path, _run(None, timed_out=True))
    assert "claude.jsonl line 7 is not JSON" in result.capture_errors
    assert not result.evidence_complete
    assert len(result.all_tool_calls) == 2


def test_unknown_events_and_subtypes_are_kept_raw_and_otherwise_ignored(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    extra = [
        json.dumps({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}),
        json.dumps({"type": "system", "subtype": "something_new", "detail": 1}),
        json.dumps({"type": "stream_event", "event": {"type": "content_block_delta"}}),
        "[1, 2, 3]",
        "",
    ]
    result = _result([lines[0], *extra, *lines[1:]], tmp_path)
    baseline = _result(lines, tmp_path)
    assert result.success
    assert result.all_tool_calls == baseline.all_tool_calls
    assert result.turns == baseline.turns
    assert result.usage == baseline.usage
    assert len(result.raw_events) == len(baseline.raw_events) + 4


def test_a_result_for_an_unknown_call_breaks_correlation(tmp_path: Path) -> None:
    lines = [
        line.replace('"tool_use_id":"toolu_fake0002"', '"tool_use_id":"toolu_elsewhere"')
        for line in _lines("tool_calls.jsonl")
    ]
    result = _result(lines, tmp_path)
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert "toolu_elsewhere" in result.error
    assert result.all_tool_calls[1].completion_received is False


def test_a_conflicting_duplicate_result_breaks_correlation(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    duplicate = lines[3].replace("(Bash completed with no output)", "something else")
    result = _result([*lines[:4], duplicate, *lines[4:]], tmp_path)
    assert not result.success
    assert "completed twice" in (result.error or "")
    # An identical repeat is harmless.
    assert _result([*lines[:4], lines[3], *lines[4:]], tmp_path).success


def test_a_missing_result_without_a_timeout_reports_the_exit_and_stderr(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")[:-1]
    stream = parse_claude_stream(lines)
    result = claude_result(
        stream, _run(1), _task(tmp_path), probed_version=None, stderr="boom\nerror: unknown option '--x'\n"
    )
    assert (
        result.error == "claude-code exited with code 1 before its result event: error: unknown option '--x'"
    )
    assert result.usage == ()


def test_an_aborted_retry_loop_is_an_execution_error(tmp_path: Path) -> None:
    lines = _lines("auth_retrying_cut_off.jsonl")
    reasons = [_watch(line) for line in lines]
    assert reasons[0] is None
    assert reasons[1] is not None
    assert "HTTP 401" in reasons[1]
    result = _result(lines[:2], tmp_path, _run(None, aborted=reasons[1]))
    assert result.stop_reason == "execution_error"
    assert result.error == f"claude-code: {reasons[1]}"


def test_a_version_mismatch_is_recorded(tmp_path: Path) -> None:
    stream = parse_claude_stream(_lines("tool_calls.jsonl"))
    result = claude_result(stream, _run(), _task(tmp_path), probed_version="2.1.100")
    assert result.agent_version == "2.1.197"
    assert any("2.1.100" in error for error in result.capture_errors)


def test_tool_results_with_images_keep_the_bytes(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    event = json.loads(lines[3])
    event["message"]["content"][0]["content"] = [
        {"type": "text", "text": "a screenshot"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}},
    ]
    result = _result([*lines[:3], json.dumps(event), *lines[4:]], tmp_path)
    call = result.all_tool_calls[0]
    assert call.result == "a screenshot"
    assert call.image_content == b"\x89PNG\r\n"
    assert call.image_media_type == "image/png"


def test_the_context_window_tag_is_not_part_of_the_model_name() -> None:
    assert plain_model("claude-opus-4-8[1m]") == "claude-opus-4-8"
    assert plain_model("claude-sonnet-5") == "claude-sonnet-5"
