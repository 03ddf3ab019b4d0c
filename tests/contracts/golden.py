"""The golden evidence files under tests/data/evidence/, and the rich suite they are made from.

The files are produced, never hand-edited: change this module (or the producer) and regenerate with

    uv run --frozen python -m tests.contracts.golden

Each invalid file is the valid one with one deliberate defect, paired here with the error the strict loader
must give for it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trialbook.evidence import (
    AgentResult,
    AssertionRecord,
    CopilotResult,
    DiscoveredSkill,
    ExecutionRecord,
    InstructionLoad,
    RequestAudit,
    SkillDiscovery,
    SubagentInvocation,
    SuiteMetadata,
    SuiteReport,
    TestReport,
    ToolCall,
    ToolImage,
    Turn,
    UsageEntry,
    suite_to_json,
)

DATA = Path(__file__).resolve().parent.parent / "data" / "evidence"
VALID = "suite-4.0.json"
OLD = "suite-3.0.json"
REGENERATE = "uv run --frozen python -m tests.contracts.golden"

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
GIF = b"GIF89a\x01\x00\x01\x00"


def _usage(model: str | None, inp: int | None, out: int | None, cache: int | None = None) -> UsageEntry:
    return UsageEntry(
        model=model,
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=cache,
        cache_write_tokens=None,
        reasoning_tokens=None,
        reasoning_effort=None,
        duration_ms=None,
    )


def _grandchild() -> CopilotResult:
    return CopilotResult(
        agent_name="copilot",
        agent_version="1.0.102",
        success=True,
        error=None,
        stop_reason="completed",
        turns=(Turn("assistant", "checked the schema"),),
        usage=(_usage("gpt-5-mini", 3, 1, 0),),
        premium_requests=0.0,
    )


def _child() -> CopilotResult:
    return CopilotResult(
        agent_name="copilot",
        agent_version="1.0.102",
        success=True,
        error=None,
        stop_reason="completed",
        turns=(Turn("user", "review the migration"), Turn("assistant", "", ("c-9",))),
        all_tool_calls=(
            ToolCall("c-9", "read_file", {"path": "db/migrate.sql"}, True, True, "CREATE TABLE t;", None),
        ),
        usage=(_usage("gpt-5.2", 40, 12, 30),),
        configuration={"model": "gpt-5.2", "system_message": "You review SQL."},
        premium_requests=1.0,
        subagent_invocations=(
            SubagentInvocation(
                invocation_id="inv-1a",
                name="schema-checker",
                status="completed",
                duration_ms=9.5,
                result=_grandchild(),
            ),
        ),
        tool_calls_admitted=1,
    )


def _copilot_session() -> CopilotResult:
    calls = (
        ToolCall("c-1", "get_balance", {"account": "A-1"}, True, True, "", None),
        ToolCall("c-2", "transfer", {"amount": 500.0, "to": "B-2"}, True, False, None, "permission denied"),
        ToolCall(
            "c-3",
            "screenshot",
            {},
            True,
            True,
            None,
            None,
            image_content=PNG,
            image_media_type="image/png",
            additional_images=(ToolImage(GIF, "image/gif"), ToolImage(b"", None)),
        ),
        ToolCall(None, "shell", {"command": ["ls", "-la"]}, False, None, None, None),
    )
    return CopilotResult(
        agent_name="copilot",
        agent_version="1.0.102",
        success=False,
        error="a tool call never completed",
        stop_reason="execution_error",
        turns=(
            Turn("system", None),
            Turn("user", "Move 500 from A-1 to B-2."),
            Turn("assistant", None, ("c-1", "c-2")),
            Turn("assistant", "", ("c-3", None)),
            Turn("assistant", "I could not finish the transfer."),
        ),
        all_tool_calls=calls,
        usage=(_usage("gpt-5.2", 1200, 80, 1000), _usage("gpt-5.2", 1500, 0, None)),
        cost_usd=None,
        model_used="gpt-5.2",
        duration_ms=15234.25,
        working_directory="/tmp/trialbook/bank",
        raw_events=({"type": "session.start", "id": 1}, {"type": "tool.complete", "callId": "c-7"}, None, ""),
        capture_errors=("completion for call 'c-7' has no matching start",),
        configuration={
            "model": "gpt-5.2",
            "system_message": "",
            "reasoning_effort": None,
            "max_output_tokens": 4096,
            "tools": [
                {"name": "get_balance", "description": "Read a balance.", "parameters": {"type": "object"}}
            ],
        },
        premium_requests=2.0,
        subagent_invocations=(
            SubagentInvocation(
                invocation_id="inv-1", name="reviewer", status="completed", duration_ms=812.0, result=_child()
            ),
            SubagentInvocation(invocation_id="inv-2", name=None, status="failed", duration_ms=None),
        ),
        permission_requested=True,
        tool_calls_admitted=4,
        request_audit=(
            RequestAudit("req-1", "gpt-5.2", ("get_balance", "transfer"), "medium", (), 0, "e3b0" * 16),
            RequestAudit(None, None, (), None, (None, "high"), 2, "ab12" * 16),
        ),
        skill_discovery=SkillDiscovery(
            skills=(
                DiscoveredSkill(
                    "banking", "Bank rules.", "project", True, True, "skills/banking", None, None, None
                ),
                DiscoveredSkill(
                    "legacy", None, None, False, None, None, "old-plugin", "/legacy", "[account]"
                ),
            ),
            warnings=("skills/empty has no SKILL.md",),
            errors=(),
            complete=True,
        ),
    )


def _timed_out() -> CopilotResult:
    return CopilotResult(
        agent_name="copilot",
        agent_version=None,
        success=False,
        error="timed out after 600 s",
        stop_reason="timeout",
        usage=(_usage("gpt-5.2", 700, 40, 0), _usage("gpt-5.2", None, 15)),
        premium_requests=None,
    )


def rich_suite() -> SuiteReport:
    """A suite touching every record type, optional value and edge the schema has."""
    literal = AgentResult(
        agent_name="literal",
        agent_version=None,
        success=True,
        error=None,
        stop_reason="completed",
        cost_usd=0.0,
        working_directory="/tmp/trialbook/create-project/1",
        configuration={"shell": "bash"},
    )
    claude = AgentResult(
        agent_name="claude-code",
        agent_version="2.1.197",
        success=True,
        error=None,
        stop_reason="completed",
        turns=(Turn("assistant", "Done."),),
        usage=(_usage("claude-sonnet-4-5", 6, 4, 0),),
        cost_usd=0.0001,
        model_used="claude-sonnet-4-5",
        duration_ms=812.5,
        instructions_loaded=(
            InstructionLoad("CLAUDE.md", "instructions", "c1" * 32, True),
            InstructionLoad("AGENTS.md", "instructions", "a9" * 32, False),
            InstructionLoad(".claude/skills/deploy", "skill", "5d" * 32, None),
        ),
    )
    checks = (
        AssertionRecord("ran", "ran neon init", True, "neon init", "neon init --project-id p1"),
        AssertionRecord(
            "assert_that", "has-readme", False, "a README", "", error="ImportError: no module evals"
        ),
    )
    return SuiteReport(
        metadata=SuiteMetadata(
            producer="trialbook eval",
            trialbook_version="0.1.0",
            started_at="2026-01-02T03:04:05+00:00",
            finished_at="2026-01-02T03:14:05+00:00",
            duration_s=600.0,
            git_commit="0" * 40,
            ci_run_url=None,
        ),
        tests=(
            TestReport(
                id="create-project::literal",
                outcome="passed",
                duration_s=3.25,
                properties={"pass_rate": 1.0, "threshold": 0.67, "note": "", "runs": [1, 2]},
                executions=(
                    ExecutionRecord(result=literal, trial=1, passed=True, assertions=checks[:1]),
                    ExecutionRecord(result=claude, trial=2, passed=False, assertions=checks),
                ),
            ),
            TestReport(
                id="tests/test_bank.py::test_transfer",
                outcome="failed",
                duration_s=16.0,
                assertion_errors=("AssertionError: balance is 1000, expected 500",),
                properties={"side": "baseline", "extra": None},
                executions=(ExecutionRecord(result=_copilot_session(), comparison_role="baseline"),),
            ),
            TestReport(
                id="deploy::copilot",
                outcome="error",
                executions=(ExecutionRecord(result=_timed_out(), trial=1),),
            ),
            TestReport(id="cached-eval::codex", outcome="cached"),
            TestReport(id="tests/test_skip.py::test_later", outcome="skipped", assertion_errors=("",)),
        ),
    )


# -- the defect files -----------------------------------------------------------------------------------

Doc = dict[str, Any]


def _at(doc: Doc, path: str) -> Any:
    node: Any = doc
    for part in path.replace("]", "").replace("[", ".").split("."):
        node = node[int(part)] if part.isdigit() else node[part]
    return node


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    parent, _, key = path.rpartition(".")
    return lambda doc: _at(doc, parent).__setitem__(key, value)


def _drop(path: str) -> Callable[[Doc], None]:
    parent, _, key = path.rpartition(".")
    return lambda doc: _at(doc, parent).pop(key)


def _strip_newer_fields(node: Any) -> None:
    if isinstance(node, dict):
        for key in ("result_type", "skill_discovery"):
            node.pop(key, None)
        for value in node.values():
            _strip_newer_fields(value)
    elif isinstance(node, list):
        for value in node:
            _strip_newer_fields(value)


def _old_layout(doc: Doc) -> None:
    doc["schema_version"] = "3.0"
    _strip_newer_fields(doc)


_R0 = "tests[1].executions[0].result"
INVALID: dict[str, tuple[Callable[[Doc], None], str]] = {
    "missing-usage-field": (
        _drop("tests[2].executions[0].result.usage[1].input_tokens"),
        "tests[2].executions[0].result.usage[1]: missing field 'input_tokens'",
    ),
    "missing-grandchild-usage": (
        _drop(f"{_R0}.subagent_invocations[0].result.subagent_invocations[0].result.usage"),
        f"{_R0}.subagent_invocations[0].result.subagent_invocations[0].result: missing field 'usage'",
    ),
    "derived-total-mismatch": (
        _set("tests[0].executions[1].result.total_tokens", 12),
        "tests[0].executions[1].result.total_tokens: saved 12 but the record gives 10",
    ),
    "parent-total-excludes-child": (
        _set(f"{_R0}.total_input_tokens", 2700),
        f"{_R0}.total_input_tokens: saved 2700 but the record gives 2743",
    ),
    "outcome-counts-mismatch": (
        _set("outcome_counts.passed", 2),
        "outcome_counts: saved {",
    ),
    "unknown-field": (
        _set("tests[0].executions[1].result.usage[0].premium", 1),
        "tests[0].executions[1].result.usage[0]: unknown field 'premium'",
    ),
    "bool-as-integer": (
        _set("tests[0].executions[0].trial", True),
        "executions[0].trial: expected an integer",
    ),
    "null-agent-name": (_set(f"{_R0}.agent_name", None), f"{_R0}.agent_name: expected a string, got null"),
    "unknown-stop-reason": (
        _set(f"{_R0}.stop_reason", "finished"),
        f'{_R0}.stop_reason: "finished" is not one of',
    ),
    "loaded-as-string": (
        _set("tests[0].executions[1].result.instructions_loaded[0].loaded", "true"),
        "tests[0].executions[1].result.instructions_loaded[0].loaded: expected a boolean, got a string",
    ),
    "unknown-input-kind": (
        _set("tests[0].executions[1].result.instructions_loaded[2].kind", "agent"),
        'tests[0].executions[1].result.instructions_loaded[2].kind: "agent" is not one of',
    ),
    "unknown-outcome": (_set("tests[3].outcome", "green"), 'tests[3].outcome: "green" is not one of'),
    "bad-image-base64": (
        _set(f"{_R0}.all_tool_calls[2].image_content", "not base64!"),
        f"{_R0}.all_tool_calls[2].image_content: not valid base64",
    ),
    "unknown-result-type": (_set(f"{_R0}.result_type", "claude"), f'{_R0}.result_type: "claude" is not'),
    "agent-child-result": (
        _set(f"{_R0}.subagent_invocations[0].result.result_type", "agent"),
        f'{_R0}.subagent_invocations[0].result.result_type: "agent" is not "copilot"',
    ),
    "secret-in-configuration": (
        _set(f"{_R0}.configuration.tools[0].api_key", "sk-123"),
        f"{_R0}.configuration.tools[0].api_key: credentials",
    ),
    "image-bytes-as-array": (
        _set(f"{_R0}.all_tool_calls[2].additional_images[0].content", [71, 73, 70]),
        "additional_images[0].content: expected a base64 string, got an array",
    ),
}


def render(doc: Doc) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def golden_files() -> dict[str, str]:
    """Every golden file's relative path and exact text."""
    valid = suite_to_json(rich_suite())
    files = {VALID: render(valid)}
    old = copy.deepcopy(valid)
    _old_layout(old)
    files[OLD] = render(old)
    for name, (mutate, _) in INVALID.items():
        doc = copy.deepcopy(valid)
        mutate(doc)
        files[f"invalid/{name}.json"] = render(doc)
    half = files[VALID][: len(files[VALID]) // 2]
    files["invalid/truncated.json"] = half
    files["invalid/nan-cost.json"] = files[VALID].replace('"cost_usd": 0.0001', '"cost_usd": NaN')
    files["invalid/duplicate-key.json"] = files[VALID].replace(
        '"producer": "trialbook eval",', '"producer": "trialbook eval",\n    "producer": "other",'
    )
    return files


TEXT_DEFECTS = {
    "truncated": "not valid JSON at line",
    "nan-cost": "NaN is not a JSON number",
    "duplicate-key": "the key 'producer' appears twice",
}


def main() -> None:
    for relative, text in golden_files().items():
        target = DATA / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(target.relative_to(DATA.parent.parent.parent))


if __name__ == "__main__":
    main()
