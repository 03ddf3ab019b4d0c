"""The viewer's pure parts: escaping by construction, unknown kept unknown, SVG that says what it shows."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from trialbook.report.html import script_json
from trialbook.report.viewer_svg import cost_svg, interval_svg, pass_rate_svg

HOSTILE = ["</script>", "</SCRIPT >", "<!--", "<script>", "]]>", "\u2028", "\u2029", "&lt;", "'\"`"]


@given(
    st.recursive(
        st.text() | st.sampled_from(HOSTILE),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    )
)
def test_script_json_cannot_end_its_script_element_and_round_trips(value: object) -> None:
    text = str(script_json(value))
    assert "<" not in text and ">" not in text and "&" not in text
    assert "\u2028" not in text and "\u2029" not in text
    assert json.loads(text) == value


def test_svg_text_is_escaped() -> None:
    runs: list[dict[str, Any]] = [
        {
            "started_at": "<b>",
            "verdict": "pass",
            "pass_rate": 1.0,
            "agent_version": "</svg><script>",
            "cost_usd": None,
        },
        {"started_at": "t2", "verdict": "fail", "pass_rate": None, "agent_version": "2&3", "cost_usd": 0.5},
    ]
    for svg in (pass_rate_svg(runs), cost_svg(runs)):
        assert "<script>" not in svg and "<b>" not in svg
        assert "&lt;/svg&gt;&lt;script&gt;" in svg
        assert svg.count("<svg") == 1 and svg.endswith("</svg>")


def test_version_changes_are_marked_and_unknown_rates_are_not_zero() -> None:
    runs: list[dict[str, Any]] = [
        {"started_at": "a", "verdict": "pass", "pass_rate": 1.0, "agent_version": "1", "cost_usd": 0.1},
        {"started_at": "b", "verdict": "error", "pass_rate": None, "agent_version": "2", "cost_usd": None},
        {"started_at": "c", "verdict": "fail", "pass_rate": 0.0, "agent_version": "2", "cost_usd": 0.0},
    ]
    svg = pass_rate_svg(runs)
    assert svg.count('class="version"') == 1
    assert svg.count("<circle") == 2  # the run with no finished trial has no dot at 0%
    assert "pass rate unknown" in svg
    assert "cost unknown" in cost_svg(runs)


def test_interval_bar_shows_band_rate_and_threshold() -> None:
    svg = interval_svg({"low": 0.2, "high": 0.9}, 2 / 3, 0.8)
    assert re.search(r'class="band" x="24.0"', svg)
    assert 'class="threshold" x1="96.0"' in svg
    assert "pass rate 67%, 95% interval 20%–90%, threshold 80%" in svg
    assert "band" not in interval_svg(None, None, 0.8)


def _execution(trial: int, cost: float | None, usage: bool) -> Any:
    from trialbook.evidence import AgentResult, ExecutionRecord, UsageEntry

    entries = (UsageEntry("claude-sonnet-4.5", 1000, 100, 0, 0, None, None, None),) if usage else ()
    result = AgentResult(
        agent_name="a", agent_version="1", success=True, error=None, stop_reason="completed",
        usage=entries, cost_usd=cost,
    )  # fmt: skip
    return ExecutionRecord(result=result, trial=trial, passed=True)


def test_reported_estimated_and_unknown_costs_are_kept_apart(tmp_path: Any) -> None:
    from trialbook.evidence import SuiteMetadata, SuiteReport, TestReport
    from trialbook.report.viewer_load import RunData
    from trialbook.report.viewer_model import build_overview

    executions = (_execution(1, 0.5, False), _execution(2, None, True), _execution(3, None, False))
    test = TestReport(
        id="e::a", outcome="passed", properties={"trials": 3, "passed": 3}, executions=executions
    )
    suite = SuiteReport(
        metadata=SuiteMetadata(producer="t", trialbook_version="0", started_at="x"), tests=(test,)
    )
    [row] = build_overview(RunData(folder=tmp_path, suite=suite, suite_bytes=0, trials={}))
    cost = row["cost"]
    assert cost["reported_usd"] == 0.5 and cost["reported_trials"] == 1
    assert cost["estimated_usd"] is not None and cost["estimated_usd"] > 0 and cost["estimated_trials"] == 1
    assert cost["unknown_trials"] == 1
    assert row["duration_s"] is None  # unknown, not 0
