"""Hypothesis strategies for every evidence record, nested child sessions included."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from trialbook.evidence import (
    OUTCOMES,
    PRICES,
    STOP_REASONS,
    AgentResult,
    AssertionRecord,
    CopilotResult,
    DiscoveredSkill,
    ExecutionRecord,
    JsonValue,
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
    safe_configuration,
)

text = st.text(max_size=12)
# None and "" are both drawn often, so a codec that confuses them cannot pass.
opt_text = st.one_of(st.none(), st.just(""), text)
opt_bool = st.one_of(st.none(), st.booleans())
counts = st.one_of(st.none(), st.just(0), st.integers(min_value=0, max_value=10**7))
numbers = st.floats(allow_nan=False, allow_infinity=False)
opt_numbers = st.one_of(st.none(), numbers)
# Durations and costs are never negative; the codec refuses a record that says otherwise.
opt_amounts = st.one_of(st.none(), st.floats(min_value=0, allow_nan=False, allow_infinity=False))
json_values: st.SearchStrategy[JsonValue] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), numbers, text),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(text, inner, max_size=3)),
    max_leaves=6,
)
json_objects = st.dictionaries(text, json_values, max_size=4)
configurations = st.one_of(st.none(), json_objects.map(safe_configuration))
models = st.one_of(st.none(), st.sampled_from([*PRICES, "unpriced-model"]))


def tuples(strategy: st.SearchStrategy[object], max_size: int = 3) -> st.SearchStrategy[tuple[object, ...]]:
    return st.lists(strategy, max_size=max_size).map(tuple)


usage_entries = st.builds(
    UsageEntry,
    model=models,
    input_tokens=counts,
    output_tokens=counts,
    cache_read_tokens=counts,
    cache_write_tokens=counts,
    reasoning_tokens=counts,
    reasoning_effort=opt_text,
    duration_ms=opt_amounts,
)
images = st.builds(ToolImage, content=st.binary(max_size=24), media_type=opt_text)
tool_calls = st.builds(
    ToolCall,
    call_id=opt_text,
    name=text,
    arguments=json_values,
    completion_received=opt_bool,
    success=opt_bool,
    result=opt_text,
    error=opt_text,
    image_content=st.one_of(st.none(), st.binary(max_size=24)),
    image_media_type=opt_text,
    additional_images=tuples(images),
)
turns = st.builds(
    Turn,
    role=st.sampled_from(["user", "assistant", "system"]),
    content=opt_text,
    tool_call_ids=tuples(opt_text),
)
audits = st.builds(
    RequestAudit,
    request_id=opt_text,
    model=opt_text,
    tool_names=tuples(text),
    reasoning_effort=opt_text,
    image_details=tuples(opt_text),
    image_count=st.just(0),
    instructions_sha256=st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
).map(lambda audit: replace(audit, image_count=len(audit.image_details)))  # one count per listed image
skills = st.builds(
    DiscoveredSkill,
    name=text,
    description=opt_text,
    source=opt_text,
    enabled=st.booleans(),
    user_invocable=opt_bool,
    path=opt_text,
    plugin_name=opt_text,
    command_name=opt_text,
    argument_hint=opt_text,
)
discoveries = st.one_of(
    st.none(),
    st.builds(
        SkillDiscovery,
        skills=tuples(skills),
        warnings=tuples(text),
        errors=tuples(text),
        complete=st.booleans(),
    ),
)
_common = {
    "agent_name": text,
    "agent_version": opt_text,
    "success": st.booleans(),
    "error": opt_text,
    "stop_reason": st.one_of(st.none(), st.sampled_from(STOP_REASONS)),
    "turns": tuples(turns),
    "all_tool_calls": tuples(tool_calls),
    "usage": tuples(usage_entries),
    "cost_usd": opt_amounts,
    "model_used": opt_text,
    "duration_ms": opt_amounts,
    "working_directory": opt_text,
    "raw_events": tuples(json_values),
    "capture_errors": tuples(text, max_size=2),
    "configuration": configurations,
}
agent_results = st.builds(AgentResult, **_common)


def copilot_results(depth: int = 2) -> st.SearchStrategy[CopilotResult]:
    """Copilot sessions whose captured children nest up to ``depth`` levels."""
    child = st.none() if depth == 0 else st.one_of(st.none(), copilot_results(depth - 1))
    invocations = st.builds(
        SubagentInvocation,
        invocation_id=opt_text,
        name=opt_text,
        status=st.sampled_from(["completed", "failed", "running"]),
        duration_ms=opt_amounts,
        result=child,
    )
    return st.builds(
        CopilotResult,
        **_common,
        premium_requests=st.one_of(st.none(), st.integers(0, 50).map(float)),
        subagent_invocations=tuples(invocations, max_size=2),
        permission_requested=st.booleans(),
        tool_calls_admitted=st.one_of(st.none(), st.integers(0, 100)),
        request_audit=tuples(audits, max_size=2),
        skill_discovery=discoveries,
    )


results = st.one_of(agent_results, copilot_results())
assertion_records = st.builds(
    AssertionRecord, kind=text, label=text, passed=st.booleans(), expected=text, actual=text, error=opt_text
)
executions = st.builds(
    ExecutionRecord,
    result=results,
    trial=st.one_of(st.none(), st.integers(1, 20)),
    comparison_role=opt_text,
    passed=opt_bool,
    assertions=tuples(assertion_records, max_size=2),
)
tests = st.builds(
    TestReport,
    id=text,
    outcome=st.sampled_from(OUTCOMES),
    duration_s=opt_numbers,
    assertion_errors=tuples(text, max_size=2),
    properties=json_objects,
    executions=tuples(executions, max_size=2),
)
suites = st.builds(
    SuiteReport,
    metadata=st.builds(
        SuiteMetadata,
        producer=text,
        trialbook_version=text,
        started_at=text,
        finished_at=opt_text,
        duration_s=opt_numbers,
        git_commit=opt_text,
        ci_run_url=opt_text,
    ),
    tests=tuples(tests, max_size=3),
)
