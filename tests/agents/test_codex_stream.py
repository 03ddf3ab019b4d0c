"""Codex's ``exec --json`` stream and rollout, recorded from the real CLI (tests/data/codex), as evidence.

The recordings came from Codex 0.171.0 against the loopback fake model (the rollout trimmed to the
entries trialbook reads); edited variants are built from them below so each edit is visible here.
"""

from __future__ import annotations

import json
from pathlib import Path

from trialbook.agents import AgentTask
from trialbook.agents._cli_run import CliRun
from trialbook.agents._codex_stream import Rollout, parse_codex_stream, parse_rollout
from trialbook.agents.codex import _watch, codex_result
from trialbook.evidence import AgentResult, dump_result, load_result

DATA = Path(__file__).parent.parent / "data" / "codex"
PROMPT = "Write hi to out.txt then deploy"
ROLLOUT = Rollout(model="gpt-5.5", cli_version="0.171.0", reasoning_effort=None)


def _lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def _task(tmp_path: Path) -> AgentTask:
    return AgentTask(
        prompt=PROMPT, workdir=tmp_path, home=tmp_path, env={}, output_dir=tmp_path, timeout_s=30
    )


def _run(returncode: int | None = 0, *, timed_out: bool = False, aborted: str | None = None) -> CliRun:
    return CliRun((), "", returncode, timed_out, aborted, 987.0)


def _result(
    lines: list[str], tmp_path: Path, run: CliRun | None = None, rollout: Rollout | None = ROLLOUT
) -> AgentResult:
    return codex_result(
        parse_codex_stream(lines), rollout, run or _run(), _task(tmp_path), probed_version="0.171.0"
    )


def _item(kind: str, item_id: str, **fields: object) -> dict[str, object]:
    return {"type": kind, "item": {"id": item_id, **fields}}


def test_the_rollout_names_the_model_and_version() -> None:
    assert parse_rollout(_lines("tool_calls.rollout.jsonl")) == ROLLOUT
    assert parse_rollout(
        ["not json", "{}", '{"type":"turn_context","payload":{"model":"m","effort":"high"}}']
    ) == Rollout("m", None, "high")


def test_a_full_session_correlates_commands_messages_and_usage(tmp_path: Path) -> None:
    result = _result(_lines("tool_calls.jsonl"), tmp_path)
    assert result.success
    assert result.stop_reason == "completed"
    deploy, missing = result.all_tool_calls
    assert deploy.call_id == "item_1"
    assert deploy.name == "command_execution"
    assert deploy.arguments == {"command": "/bin/bash -c 'echo hi > out.txt && vendorcli deploy'"}
    assert (deploy.completion_received, deploy.success, deploy.result, deploy.error) == (True, True, "", None)
    assert missing.success is False
    assert missing.result == "cat: missing.txt: No such file or directory\n"
    assert missing.error == "failed: exit code 1"
    assert [(t.role, t.content, t.tool_call_ids) for t in result.turns] == [
        ("user", PROMPT, ()),
        ("assistant", "I will write the file, then deploy.", ()),
        ("assistant", "Done: out.txt written and deployed.", ("item_1", "item_2")),
    ]
    (usage,) = result.usage
    assert (usage.model, usage.input_tokens, usage.output_tokens) == ("gpt-5.5", 410, 90)
    assert (usage.cache_read_tokens, usage.cache_write_tokens, usage.reasoning_tokens) == (50, 0, 0)
    assert result.cost_usd is None
    assert result.estimated_cost().usd is not None  # priced by trialbook's own table instead
    assert result.model_used == "gpt-5.5"
    assert result.agent_version == "0.171.0"
    assert result.evidence_complete
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result


def test_usage_is_the_last_cumulative_report_never_a_sum(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    earlier = json.dumps({"type": "turn.completed", "usage": {"input_tokens": 120, "output_tokens": 30}})
    result = _result([*lines[:-1], earlier, lines[-1]], tmp_path)
    assert result.total_input_tokens == 410
    assert result.total_output_tokens == 90


def test_older_usage_without_the_newer_fields_keeps_them_unknown(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    old = json.dumps(
        {"type": "turn.completed", "usage": {"input_tokens": 7, "cached_input_tokens": 2, "output_tokens": 3}}
    )
    (usage,) = _result([*lines[:-1], old], tmp_path).usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (7, 2, 3)
    assert usage.cache_write_tokens is None
    assert usage.reasoning_tokens is None


def test_a_rejected_key_is_a_failed_turn_and_the_watch_stops_at_the_first_retry(tmp_path: Path) -> None:
    lines = _lines("auth_rejected.jsonl")
    result = _result(lines, tmp_path, _run(1), rollout=None)
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert result.error.startswith("codex: the turn failed: unexpected status 401 Unauthorized")
    assert result.usage == ()
    assert result.model_used is None
    reasons = [_watch(line) for line in lines]
    assert reasons[:2] == [None, None]
    assert reasons[2] is not None
    assert "rejected the credentials" in reasons[2]


def test_an_offline_loop_is_stopped_and_a_cut_off_stream_has_unknown_usage(tmp_path: Path) -> None:
    lines = _lines("offline_cut_off.jsonl")
    reasons = [_watch(line) for line in lines]
    assert reasons[:-1] == [None] * (len(lines) - 1)  # ordinary reconnects are left to Codex
    assert reasons[-1] is not None
    assert "cannot be reached" in reasons[-1]
    timed_out = _result(lines, tmp_path, _run(None, timed_out=True), rollout=None)
    assert timed_out.stop_reason == "timeout"
    assert timed_out.usage == ()
    assert timed_out.total_input_tokens is None
    assert timed_out.cost_usd is None
    assert "no turn completed: usage is unknown" in timed_out.capture_errors
    aborted = _result(lines, tmp_path, _run(None, aborted=reasons[-1]), rollout=None)
    assert aborted.error == f"codex: {reasons[-1]}"


def test_no_terminal_event_without_a_timeout_is_an_execution_error(tmp_path: Path) -> None:
    result = _result(_lines("offline_cut_off.jsonl"), tmp_path, _run(1), rollout=None)
    assert result.stop_reason == "execution_error"
    assert result.error == (
        "codex exited with code 1 before its turn ended: "
        "Reconnecting... waiting for network (Connection failed: error sending request)"
    )


def test_file_changes_mcp_calls_and_searches_become_tool_calls(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    edits = [
        _item(
            "item.completed",
            "item_10",
            type="file_change",
            changes=[{"path": "a.py", "kind": "add"}],
            status="completed",
        ),
        _item(
            "item.started",
            "item_11",
            type="mcp_tool_call",
            server="docs",
            tool="search",
            arguments={"q": "x"},
            status="in_progress",
        ),
        _item(
            "item.completed",
            "item_11",
            type="mcp_tool_call",
            server="docs",
            tool="search",
            arguments={"q": "x"},
            result={"content": [{"type": "text", "text": "found"}], "structured_content": None},
            error=None,
            status="completed",
        ),
        _item(
            "item.completed",
            "item_12",
            type="mcp_tool_call",
            server="docs",
            tool="fetch",
            arguments=None,
            result=None,
            error={"message": "no such page"},
            status="failed",
        ),
        _item("item.completed", "item_13", type="web_search", query="trialbook"),
        _item("item.started", "item_14", type="todo_list", items=[{"text": "plan", "completed": False}]),
    ]
    result = _result([*lines[:-2], *map(json.dumps, edits), *lines[-2:]], tmp_path)
    by_id = {call.call_id: call for call in result.all_tool_calls}
    assert by_id["item_10"].name == "file_change"
    assert by_id["item_10"].result == "add a.py"
    assert by_id["item_11"].name == "mcp__docs__search"
    assert (by_id["item_11"].arguments, by_id["item_11"].result, by_id["item_11"].success) == (
        {"q": "x"},
        "found",
        True,
    )
    assert (by_id["item_12"].success, by_id["item_12"].error) == (False, "no such page")
    assert by_id["item_13"].arguments == {"query": "trialbook"}
    assert by_id["item_13"].result is None  # search results are not in the stream
    assert "item_14" not in by_id  # a to-do list is not a tool call
    assert not result.evidence_complete  # because of the search whose output was not captured


def test_a_call_still_running_at_the_cut_is_pending(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    result = _result(lines[:6], tmp_path, _run(None, timed_out=True))
    pending = result.all_tool_calls[-1]
    assert pending.call_id == "item_2"
    assert pending.completion_received is False
    assert pending.success is None
    assert pending.result is None


def test_unknown_events_truncated_lines_and_conflicts(tmp_path: Path) -> None:
    lines = _lines("tool_calls.jsonl")
    unknown = [
        json.dumps({"type": "thread.something_new", "x": 1}),
        "[]",
        json.dumps({"type": "item.completed", "item": {"id": "item_9", "type": "future_kind"}}),
    ]
    result = _result([lines[0], *unknown, *lines[1:]], tmp_path)
    assert result.success
    assert len(result.all_tool_calls) == 2
    truncated = _result([*lines[:-1], lines[-1][:30]], tmp_path, _run(None, timed_out=True))
    assert "codex.jsonl line 9 is not JSON" in truncated.capture_errors
    assert truncated.usage == ()
    conflicting = lines[4].replace('"exit_code":0', '"exit_code":3')
    broken = _result([*lines[:5], conflicting, *lines[5:]], tmp_path)
    assert not broken.success
    assert broken.error is not None
    assert "item_1 completed twice" in broken.error


def test_a_missing_rollout_leaves_the_model_unknown(tmp_path: Path) -> None:
    result = _result(_lines("tool_calls.jsonl"), tmp_path, rollout=None)
    assert result.success
    assert result.model_used is None
    assert result.usage[0].model is None
    assert result.agent_version == "0.171.0"  # from the probe
    assert any("rollout" in error for error in result.capture_errors)
