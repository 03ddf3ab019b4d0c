"""Which isolation ran, and what trials did outside their sandbox, as the summary and the comment say it."""

from __future__ import annotations

import json

from trialbook.evidence import (
    AgentResult,
    ExecutionRecord,
    JsonValue,
    OutsideWrite,
    RefusedConnection,
    SuiteMetadata,
    SuiteReport,
    TestReport,
)
from trialbook.github._state import _row, _row_json
from trialbook.report.isolation import isolation_text, sandbox_label
from trialbook.report.markdown import render_pr_comment, render_summary
from trialbook.report.suite_view import review_from_suite


def _result(
    refused: tuple[RefusedConnection, ...] | None = None, writes: tuple[OutsideWrite, ...] | None = None
) -> AgentResult:
    return AgentResult(
        agent_name="s", agent_version="1", success=True, error=None, stop_reason="completed",
        network_refused=refused, outside_writes=writes,
    )  # fmt: skip


def _test(test_id: str, sandbox: JsonValue, *results: AgentResult) -> TestReport:
    executions = tuple(ExecutionRecord(result=r, trial=i, passed=True) for i, r in enumerate(results, 1))
    props: dict[str, JsonValue] = {"trials": len(results), "passed": len(results), "verdict": "pass"}
    if sandbox is not None:
        props["sandbox"] = sandbox
    return TestReport(id=test_id, outcome="passed", properties=props, executions=executions)


def _suite(*tests: TestReport) -> SuiteReport:
    return SuiteReport(
        metadata=SuiteMetadata(producer="t", trialbook_version="0", started_at="x"), tests=tests
    )


REFUSED = (*(RefusedConnection(f"10.0.0.{n}", 53) for n in range(1, 8)), RefusedConnection("::1", 80))
WRITES = (
    OutsideWrite("/etc/x", 2),
    OutsideWrite("/etc/hostname", 0, removed=True),
    OutsideWrite("/etc/<b>a|b</b>", 1),
)


def test_the_summary_says_each_evals_isolation_and_lists_what_trials_did_outside() -> None:
    suite = _suite(
        _test(
            "attack::s",
            {"copy": "copy", "isolation": "bwrap", "network": "model"},
            _result(refused=(), writes=()),
            _result(refused=REFUSED),
            _result(refused=(), writes=WRITES),
        ),
        _test("plain::s", {"copy": "copy", "isolation": "none", "network": "host"}, _result()),
    )
    summary = render_summary(review_from_suite(suite).rows)
    assert "\nIsolation: bwrap (network: model) for attack; none for plain\n" in summary
    section = summary.split("### Outside the sandbox\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "- attack × s",
        "  - trial 2: network refused (8): 10.0.0.1:53, 10.0.0.2:53, 10.0.0.3:53, 10.0.0.4:53, 10.0.0.5:53, "
        "… 3 more",
        "  - trial 3: written outside the sandbox (3): /etc/x (2 bytes), /etc/hostname (removed), "
        "/etc/&lt;b&gt;a\\|b&lt;/b&gt; (1 byte)",
    ]
    # The PR comment carries the same, also after the hand-over from the run step to the publish step.
    rows = [_row(json.loads(json.dumps(_row_json(row)))) for row in review_from_suite(suite).rows]
    comment = render_pr_comment(rows)
    assert "Isolation: bwrap (network: model) for attack; none for plain" in comment
    assert "  - trial 2: network refused (8): 10.0.0.1:53" in comment


def test_one_isolation_for_every_eval_is_one_short_line_and_unknown_says_nothing() -> None:
    same: JsonValue = {"copy": None, "isolation": "bwrap", "network": "none"}
    summary = render_summary(review_from_suite(_suite(_test("a::s", same), _test("b::s", same))).rows)
    assert "\nIsolation: bwrap (network: none)\n" in summary
    assert "Outside the sandbox" not in summary
    # A suite written before the network was recorded, and one before isolation was: nothing made up.
    older = render_summary(review_from_suite(_suite(_test("a::s", {"isolation": "bwrap"}))).rows)
    assert "\nIsolation: bwrap\n" in older
    oldest = render_summary(review_from_suite(_suite(_test("a::s", None))).rows)
    assert "Isolation" not in oldest


def test_an_eval_whose_agents_ran_apart_is_named_per_agent_and_long_lists_are_counted() -> None:
    pairs = [("e", "literal", "bwrap (network: none)"), ("e", "copilot", "none")]
    pairs += [(f"x{n}", "literal", "bwrap (network: none)") for n in range(6)]
    assert isolation_text(pairs) == (
        "bwrap (network: none) for e × literal, x0, x1, x2, x3, … 2 more; none for e × copilot"
    )
    assert isolation_text([]) is None


def test_trials_with_notes_are_bounded_too() -> None:
    noisy = [_result(writes=(OutsideWrite(f"/etc/{n}", 1),)) for n in range(8)]
    summary = render_summary(review_from_suite(_suite(_test("a::s", {"isolation": "bwrap"}, *noisy))).rows)
    listed = [line for line in summary.splitlines() if line.startswith("  - ")]
    assert len(listed) == 6 and listed[-1] == "  - … 3 more trials"


def test_trials_re_checked_from_an_earlier_run_claim_no_isolation_of_this_one() -> None:
    sandbox: JsonValue = {"copy": "copy", "isolation": "bwrap", "network": "none"}
    assert sandbox_label({"sandbox": sandbox}) == "bwrap (network: none)"
    # Re-checked trials ran in the earlier run, under whatever isolation it had: not known here.
    assert sandbox_label({"sandbox": sandbox, "rescored_from": "20261205T101010Z-ab12cd"}) is None
    assert sandbox_label({"sandbox": "bwrap"}) is None and sandbox_label({}) is None
    ran = _test("ran::s", sandbox, _result())
    props = {**ran.properties, "rescored_from": "20261205T101010Z-ab12cd"}
    rechecked = TestReport(id="rechecked::s", outcome="passed", properties=props, executions=ran.executions)
    rows = {row.eval_id: row.isolation for row in review_from_suite(_suite(ran, rechecked)).rows}
    assert rows == {"ran": "bwrap (network: none)", "rechecked": None}
