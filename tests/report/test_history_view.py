"""The history view: trend, version marks, stability classes, cost, and the JSON shape."""

from __future__ import annotations

import json
from typing import Any

from tests.history.helpers import line
from trialbook.history import HistoryLine
from trialbook.report.history_view import classify, history_json, render_history, sparkline, trend


def _run(minutes: int, verdict: str = "pass", **kw: Any) -> HistoryLine:
    defaults: dict[str, Any] = {
        "pass_rate": 1.0 if verdict == "pass" else 0.0,
        "passed": 3 if verdict == "pass" else 0,
    }
    defaults.update(kw)
    return line("setup/neon", "copilot", minutes=minutes, verdict=verdict, **defaults)


def test_trend_is_oldest_to_newest_by_start_time_with_version_marks() -> None:
    runs = [
        _run(3, "fail", agent_version="1.1"),
        _run(1, agent_version="1.0"),
        _run(2, agent_version="1.0"),
        _run(4, agent_version="1.1"),
        _run(5, "error", pass_rate=None, passed=0, agent_version="1.1"),
    ]
    out = history_json({("setup/neon", "copilot"): runs})[0]
    assert out["trend"] == "✓✓|✗✓!"
    assert out["pass_rate_trend"] == "██|▁█·"
    assert out["agent_versions"] == ["1.0", "1.1"]
    assert [r["started_at"] for r in out["runs"]] == sorted(r["started_at"] for r in out["runs"])


def test_window_keeps_only_the_last_n() -> None:
    runs = [_run(m, "fail") for m in range(5)] + [_run(10 + m) for m in range(3)]
    out = history_json({("a", "b"): runs}, last_n=3)[0]
    assert out["runs_total"] == 8
    assert out["window"] == 3
    assert out["trend"] == "✓✓✓"
    assert out["flakiness"] == "stable-pass"


def test_stability_classes() -> None:
    assert classify([_run(m) for m in range(3)]) == "stable-pass"
    assert classify([_run(m, "fail") for m in range(3)]) == "stable-fail"
    assert classify([_run(0), _run(1, "fail"), _run(2)]) == "flaky"
    assert classify([_run(0), _run(1, pass_rate=2 / 3, passed=2), _run(2)]) == "flaky"
    assert classify([_run(0), _run(1)]) == "insufficient-data"
    errors = [_run(m, "error", pass_rate=None, passed=0) for m in range(5)]
    assert classify([*errors, _run(9)]) == "insufficient-data"


def test_cost_per_run_keeps_unknown_apart() -> None:
    runs = [_run(0, cost_usd=0.5), _run(1, cost_usd=None), _run(2, cost_usd=1.5)]
    cost = history_json({("a", "b"): runs})[0]["cost"]
    assert cost == {"mean_usd": 1.0, "total_known_usd": 2.0, "unknown_runs": 1}
    none_known = history_json({("a", "b"): [_run(0)]})[0]["cost"]
    assert none_known == {"mean_usd": None, "total_known_usd": None, "unknown_runs": 1}


def test_render_table() -> None:
    lines_by_key = {
        ("setup/neon", "copilot"): [
            _run(0, cost_usd=0.25, agent_version="1.0"),
            _run(1, "fail", agent_version="1.1"),
        ],
        ("alpha", "literal"): [_run(m) for m in range(4)],
    }
    text = render_history(lines_by_key, last_n=5)
    rows = text.splitlines()
    assert rows[0].split()[:3] == ["eval", "agent", "last"]
    assert rows[1].startswith("alpha")
    assert "✓✓✓✓" in rows[1]
    assert "stable-pass" in rows[1]
    assert "unknown" in rows[1]
    assert rows[2].startswith("setup/neon")
    assert "✓|✗" in rows[2]
    assert "insufficient-data" in rows[2]
    assert "$0.25 (1 unknown)" in rows[2]
    assert "1.0 → 1.1" in rows[2]
    assert "agent version changed" in text
    assert render_history({}) == "No history yet.\n"


def test_json_shape_is_serialisable() -> None:
    out = history_json({("a", "b"): [_run(0, commit="abc123", ci_run="https://ci/run/1")]})
    again = json.loads(json.dumps(out))
    assert again[0]["runs"][0]["commit"] == "abc123"
    assert again[0]["runs"][0]["ci_run"] == "https://ci/run/1"
    assert set(again[0]) == {
        "id",
        "agent",
        "runs_total",
        "window",
        "flakiness",
        "changed_at",
        "stability",
        "base_runs",
        "passed",
        "trials",
        "pass_rate",
        "pass_rate_ci95_low",
        "pass_rate_ci95_high",
        "base_agent_versions",
        "trend",
        "pass_rate_trend",
        "agent_versions",
        "cost",
        "runs",
    }


def test_sparkline_and_trend_of_nothing() -> None:
    assert trend([]) == ""
    assert sparkline([]) == ""
