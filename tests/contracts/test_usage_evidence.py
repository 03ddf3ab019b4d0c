"""Contract: usage evidence counts child sessions once, and unknown never becomes zero (or zero unknown)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings

from tests.contracts import golden, strategies
from trialbook.evidence import (
    CopilotResult,
    EvidenceSchemaError,
    ExecutionRecord,
    SubagentInvocation,
    SuiteReport,
    UsageEntry,
    dump_result,
    load_result,
    suite_from_json,
    suite_to_json,
)


def usage(
    inp: int | None, out: int | None, model: str | None = "gpt-5.2", cache: int | None = None
) -> UsageEntry:
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


def session(
    *entries: UsageEntry, children: tuple[CopilotResult | None, ...] = (), premium: float | None = 1.0
) -> CopilotResult:
    return CopilotResult(
        agent_name="copilot",
        agent_version="1.0.102",
        success=True,
        error=None,
        stop_reason="completed",
        usage=entries,
        premium_requests=premium,
        subagent_invocations=tuple(
            SubagentInvocation(
                invocation_id=f"inv-{i}", name="helper", status="completed", duration_ms=1.0, result=child
            )
            for i, child in enumerate(children)
        ),
    )


def saved(result: CopilotResult) -> dict[str, Any]:
    """The result as it lands in a suite file, and a check that it loads back unchanged."""
    suite = golden.rich_suite()
    report = replace(
        suite, tests=(replace(suite.tests[2], executions=(ExecutionRecord(result=result, trial=1),)),)
    )
    data = json.loads(json.dumps(suite_to_json(report)))
    assert suite_from_json(data) == report
    execution: dict[str, Any] = data["tests"][0]["executions"][0]
    return execution


def test_parent_totals_include_each_descendant_once() -> None:
    grandchild = session(usage(3, 1))
    child = session(usage(40, 12), children=(grandchild,))
    parent = session(usage(1000, 80), usage(200, 20), children=(child, None))
    record = saved(parent)["result"]
    assert record["total_input_tokens"] == 1000 + 200 + 40 + 3
    assert record["total_output_tokens"] == 80 + 20 + 12 + 1
    assert record["total_tokens"] == 1243 + 113
    assert record["total_premium_requests"] == 3.0
    # Usage stays session-local: the parent lists only its own entries, the child its own.
    assert [u["input_tokens"] for u in record["usage"]] == [1000, 200]
    nested = record["subagent_invocations"][0]["result"]
    assert [u["input_tokens"] for u in nested["usage"]] == [40]
    assert nested["total_input_tokens"] == 43
    assert record["subagent_invocations"][1]["result"] is None
    assert [len(r.usage) for r in parent.execution_results()] == [2, 1, 1]
    assert len(parent.all_usage) == 4


def test_a_saved_total_that_adds_inclusive_child_totals_again_is_rejected() -> None:
    child = session(usage(40, 12))
    parent = session(usage(1000, 80), children=(child,))
    data = json.loads(json.dumps(dump_result(parent)))
    data["total_input_tokens"] = 1000 + 40 + child.total_input_tokens  # type: ignore[operator]
    with pytest.raises(
        EvidenceSchemaError, match=r"^result\.total_input_tokens: saved 1080 but the record gives 1040$"
    ):
        load_result(data)


def test_one_unknown_count_anywhere_makes_the_total_unknown() -> None:
    child = session(usage(None, 12))
    parent = session(usage(1000, 80), children=(child,))
    record = saved(parent)["result"]
    assert record["total_input_tokens"] is None
    assert record["total_tokens"] is None
    assert record["total_output_tokens"] == 92  # the other direction is fully known
    assert record["subagent_invocations"][0]["result"]["usage"][0]["input_tokens"] is None
    assert parent.token_usage == {"output_tokens": 92}


def test_a_captured_session_without_usage_makes_totals_unknown() -> None:
    parent = session(usage(10, 1), children=(session(),))
    record = saved(parent)["result"]
    assert (record["total_input_tokens"], record["total_output_tokens"], record["total_tokens"]) == (
        None,
        None,
        None,
    )
    assert saved(parent)["estimated_cost_usd"] is None


def test_known_zero_stays_zero() -> None:
    parent = session(usage(0, 0), children=(session(usage(0, 0), premium=0.0),), premium=0.0)
    execution = saved(parent)
    record = execution["result"]
    assert (record["total_input_tokens"], record["total_output_tokens"], record["total_tokens"]) == (0, 0, 0)
    assert record["total_premium_requests"] == 0.0
    assert execution["estimated_cost_usd"] == 0.0


def test_unknown_premium_requests_anywhere_are_unknown() -> None:
    parent = session(usage(1, 1), children=(session(usage(1, 1), premium=None),))
    assert saved(parent)["result"]["total_premium_requests"] is None


def test_cost_estimate_covers_children_and_names_unpriced_models() -> None:
    priced = session(
        usage(1_000_000, 0, model="gpt-5"), children=(session(usage(0, 1_000_000, model="gpt-5")),)
    )
    assert saved(priced)["estimated_cost_usd"] == pytest.approx(1.25 + 10.0)
    assert saved(priced)["unpriced_models"] == []
    mixed = session(usage(10, 10, model="gpt-5"), children=(session(usage(10, 10, model="house-model")),))
    execution = saved(mixed)
    assert execution["estimated_cost_usd"] is None
    assert execution["unpriced_models"] == ["house-model"]
    unnamed = session(usage(10, 10, model=None))
    assert saved(unnamed)["unpriced_models"] == ["<unknown model>"]


def test_unknown_cache_reads_get_no_discount() -> None:
    known = saved(session(usage(1_000_000, 0, model="gpt-5", cache=1_000_000)))["estimated_cost_usd"]
    unknown = saved(session(usage(1_000_000, 0, model="gpt-5", cache=None)))["estimated_cost_usd"]
    assert known == pytest.approx(0.125)
    assert unknown == pytest.approx(1.25)


def test_a_tampered_cost_estimate_is_rejected() -> None:
    data = saved(session(usage(1_000_000, 0, model="gpt-5")))
    data["estimated_cost_usd"] = 0.5
    suite: Any = suite_to_json(golden.rich_suite())
    suite["tests"][2]["executions"][0] = data
    with pytest.raises(
        EvidenceSchemaError, match=r"tests\[2\]\.executions\[0\]\.estimated_cost_usd: saved 0.5"
    ):
        suite_from_json(json.loads(json.dumps(suite)))


def test_unknown_usage_fields_stay_null_in_the_golden_file() -> None:
    doc = json.loads((golden.DATA / golden.VALID).read_text(encoding="utf-8"))
    timed_out = doc["tests"][2]["executions"][0]["result"]
    assert timed_out["usage"][1]["input_tokens"] is None
    assert timed_out["usage"][0]["cache_read_tokens"] == 0
    assert timed_out["total_input_tokens"] is None
    assert timed_out["total_output_tokens"] == 55
    assert timed_out["total_premium_requests"] is None


@settings(max_examples=60, deadline=None)
@given(result=strategies.copilot_results(depth=3))
def test_saved_totals_always_equal_a_fresh_sum_over_the_tree(result: CopilotResult) -> None:
    record = json.loads(json.dumps(dump_result(result)))
    tree = result.execution_results()
    entries = [entry for r in tree for entry in r.usage]
    if any(not r.usage for r in tree) or any(e.input_tokens is None for e in entries):
        assert record["total_input_tokens"] is None
    else:
        assert record["total_input_tokens"] == sum(e.input_tokens or 0 for e in entries)
    premiums = [r.premium_requests for r in tree if isinstance(r, CopilotResult)]
    expected_premium = None if None in premiums else sum(p or 0.0 for p in premiums)
    assert record["total_premium_requests"] == expected_premium
    assert load_result(record) == result


def test_suite_outcome_counts_list_every_outcome() -> None:
    counts = suite_to_json(golden.rich_suite())["outcome_counts"]
    assert counts == {
        "passed": 1,
        "failed": 1,
        "error": 1,
        "skipped": 1,
        "xfailed": 0,
        "xpassed": 0,
        "incomplete": 0,
        "cached": 1,
    }
    assert SuiteReport(metadata=golden.rich_suite().metadata).outcome_counts["passed"] == 0
