"""Forecasts from history before any trial: in --dry-run, at the start of a run, and --budget-strict."""

from __future__ import annotations

import json
from pathlib import Path

from tests.history.helpers import line
from trialbook.runner._forecast import Forecast, PairForecast

from .conftest import Invoke, write


def _eval(root: Path, marker: Path, trials: int = 2) -> None:
    write(
        root / "evals/paid.eval.yaml",
        f"""
        prompt_text: make done.txt
        agents: [{{name: fake, cost_usd: 0.5, script: {json.dumps(f"touch {marker}; touch done.txt")}}}]
        trials: {trials}
        assert:
          - file_exists: done.txt
        """,
    )


def test_dry_run_with_history_shows_the_forecast(invoke: Invoke, tmp_path: Path) -> None:
    marker = tmp_path / "agent-ran"
    _eval(tmp_path, marker)
    cold = invoke("eval", "evals", "--dry-run", "--history-dir", "history")
    assert "cost unknown (no cost in history), wall time unknown (no history for 1 of 1)" in cold.output
    first = invoke("eval", "evals", "--history-dir", "history")
    assert first.exit_code == 0, first.output
    assert "forecast: 2 trials of 1 eval × agent pair: cost unknown" in first.output
    (recorded,) = (tmp_path / "history/paid.jsonl").read_text().splitlines()
    per_trial = json.loads(recorded)["duration_s"] / 2
    warm = invoke("eval", "evals", "--dry-run", "--force", "--history-dir", "history", "--concurrency", "1")
    assert warm.exit_code == 0, warm.output
    assert "forecast: 2 trials of 1 eval × agent pair: cost $1.00, wall time" in warm.output
    assert "at concurrency 1 (medians from history)" in warm.output
    assert per_trial > 0


def test_budget_strict_below_the_forecast_exits_3_before_any_agent(invoke: Invoke, tmp_path: Path) -> None:
    marker = tmp_path / "agent-ran"
    _eval(tmp_path, marker)
    assert invoke("eval", "evals", "--history-dir", "history").exit_code == 0
    marker.unlink()
    lines_before = (tmp_path / "history/paid.jsonl").read_text()
    strict = invoke(
        "eval", "evals", "--force", "--history-dir", "history", "--budget-usd", "0.6", "--budget-strict"
    )
    assert strict.exit_code == 3, strict.output
    assert "the forecast cost is $1.00, above --budget-usd 0.6" in strict.output
    assert "no trial was started" in strict.output
    assert not marker.exists()
    assert (tmp_path / "history/paid.jsonl").read_text() == lines_before
    # Without --budget-strict it is a warning at the start, and the budget stops the second trial.
    loose = invoke(
        "eval", "evals", "--force", "--history-dir", "history", "--budget-usd", "0.4", "--concurrency", "1"
    )
    assert "warning: the forecast cost is $1.00, above --budget-usd 0.4" in loose.output
    assert loose.exit_code == 3, loose.output
    assert marker.exists()


def test_wall_time_replays_the_engine_order_on_the_slots() -> None:
    pairs = (PairForecast("a", 3, 0.1, 10.0), PairForecast("b", 1, None, 30.0))
    assert Forecast(pairs, 1).wall_s == 60.0
    # Slots: a1 | b1 → a2 on slot 1 at 10, a3 at 20 on slot 1: the longest slot is b's 30 s.
    assert Forecast(pairs, 2).wall_s == 30.0
    assert Forecast(pairs, 2).cost_usd is None
    assert Forecast(pairs, 2).known_cost_usd == 0.30000000000000004
    assert Forecast((PairForecast("a", 2, 0.5, None),), 4).wall_s is None


def test_medians_per_trial_come_from_the_lines() -> None:
    from trialbook.runner._forecast import forecast

    class Entry:
        action = "run"
        key = "x::fake"

        class spec:  # a stand-in with the one field read
            trials = 4

    lines = [
        line("x", "fake", minutes=m, trials=2, passed=2, cost_usd=c, duration_s=d)
        for m, (c, d) in enumerate([(1.0, 4.0), (3.0, 8.0), (None, 6.0)])
    ]
    found = forecast([Entry()], {"x::fake": lines}, concurrency=2)  # type: ignore[list-item]
    (pair,) = found.pairs
    assert (pair.cost_per_trial, pair.seconds_per_trial) == (1.0, 3.0)
    assert found.cost_usd == 4.0
    assert found.wall_s == 6.0


def test_a_cost_under_a_cent_keeps_its_digits_and_never_reads_as_free() -> None:
    from trialbook.report.terminal import format_usd

    assert [format_usd(v) for v in (0.0027, 0.00004, 0.0, 0.01, 1.234)] == [
        "$0.0027", "<$0.0001", "$0.00", "$0.01", "$1.23",
    ]  # fmt: skip
