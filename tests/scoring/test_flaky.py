"""Stability classes from base-branch history and the test of a new run against the window."""

from __future__ import annotations

from typing import Any

from tests.history.helpers import line
from trialbook.history import HistoryLine
from trialbook.report.history_view import history_json, render_history
from trialbook.scoring.flaky import against_window, stability
from trialbook.scoring.stats import fisher_one_sided_less

# 20 base runs of 3 trials, 36 of 60 trials passing: a ~60% eval.
SIXTY = [3, 1, 2, 2, 1, 3, 2, 1, 2, 2, 3, 1, 2, 2, 1, 2, 2, 2, 1, 1]


def _run(minute: int, passed: int, trials: int = 3, threshold: float = 0.67, **kw: Any) -> HistoryLine:
    verdict = "pass" if round(passed / trials, 2) >= threshold else "fail"
    return line(
        "flaky/eval",
        "literal",
        minutes=minute,
        passed=passed,
        trials=trials,
        pass_rate=passed / trials,
        verdict=verdict,
        threshold=threshold,
        commit=f"{minute:07x}" + "0" * 33,
        **kw,
    )


def _sixty() -> list[HistoryLine]:
    return [_run(m, passed, agent_version="1.0" if m < 10 else "1.1") for m, passed in enumerate(SIXTY)]


def test_a_sixty_percent_eval_is_flaky_with_its_pooled_interval() -> None:
    assert sum(SIXTY) == 36
    found = stability(_sixty())
    assert found.flakiness == "flaky"
    assert (found.passed, found.trials, found.runs) == (36, 60, 20)
    low, high = found.interval or (0, 0)
    assert 0.47 < low < 0.48 and 0.71 < high < 0.72
    assert found.agent_versions == ("1.0", "1.1")


def test_a_failure_within_the_usual_range_is_not_a_regression_but_zero_of_ten_is() -> None:
    window = stability(_sixty())
    usual = against_window(window, 1, 3)
    assert usual is not None and not usual.regressed
    # Exact: the same hypergeometric lower tail, computed on the raw table.
    assert usual.p_value == float(fisher_one_sided_less(36, 60, 1, 3))
    assert usual.p_value > 0.1
    drop = against_window(window, 0, 10)
    assert drop is not None and drop.regressed
    assert drop.p_value < 0.001


def test_regressed_and_recovered_name_the_commit() -> None:
    runs = [_run(m, 3) for m in range(6)] + [_run(6 + m, 0) for m in range(3)]
    found = stability(runs)
    assert found.flakiness == "regressed"
    assert found.changed_at == runs[6].commit
    assert found.label == f"regressed at {str(runs[6].commit)[:7]}"
    back = stability([_run(m, 0) for m in range(4)] + [_run(4 + m, 3) for m in range(3)])
    assert back.flakiness == "recovered"
    assert back.label.startswith("recovered at 0000004")


def test_an_insignificant_change_point_stays_flaky() -> None:
    # 2/3, 2/3 then 1/3, 1/3: the verdicts changed once, but 4/6 against 2/6 is p = 0.28.
    runs = [_run(0, 2), _run(1, 2), _run(2, 1), _run(3, 1)]
    assert stability(runs).flakiness == "flaky"


def test_errors_and_pr_runs_do_not_count() -> None:
    base = [_run(m, 3) for m in range(3)]
    errors = [
        line("flaky/eval", "literal", minutes=10 + m, verdict="error", passed=0, pass_rate=0.0)
        for m in range(3)
    ]
    assert stability([*base, *errors]).flakiness == "stable-pass"
    pr = [_run(20 + m, 0, extra={"ref": "refs/pull/7/merge"}) for m in range(3)]
    out = history_json({("flaky/eval", "literal"): [*base, *pr]})[0]
    assert out["flakiness"] == "stable-pass"
    assert out["base_runs"] == 3


def test_history_flaky_lists_only_flaky_pairs_with_class_and_interval() -> None:
    grouped = {
        ("flaky/eval", "literal"): _sixty(),
        ("solid/eval", "literal"): [_run(m, 3) for m in range(5)],
    }
    listed = history_json(grouped, last_n=20, flaky=True)
    assert [s["id"] for s in listed] == ["flaky/eval"]
    assert listed[0]["pass_rate_ci95_low"] == 0.4737
    text = render_history(grouped, last_n=20, flaky=True)
    assert "flaky/eval" in text and "solid/eval" not in text
    assert "36/60 (47–71%)" in text and "flaky" in text
    assert render_history({("solid/eval", "literal"): grouped[("solid/eval", "literal")]}, flaky=True) == (
        "No flaky evals in the window.\n"
    )
