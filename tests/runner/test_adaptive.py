"""Adaptive trials end to end: waves, an early stop at the minimum, and what the report says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Invoke, write


def _eval(root: Path, trials: str, pass_rate: float, script: str) -> None:
    write(
        root / "evals/steady.eval.yaml",
        f"""
        prompt_text: make done.txt
        agents: [{{name: fake, script: {json.dumps(script)}}}]
        trials: {trials}
        pass_rate: {pass_rate}
        assert:
          - file_exists: done.txt
        """,
    )


def _trial_folders(root: Path) -> list[str]:
    return sorted(p.name for p in (root / ".trialbook/runs/latest/evals/steady/fake").glob("trial-*"))


def test_an_always_passing_agent_stops_at_the_minimum(invoke: Invoke, tmp_path: Path) -> None:
    _eval(tmp_path, "{max: 10, min: 3}", 0.5, "touch done.txt")
    result = invoke("eval", "evals", "--concurrency", "4", "--history-dir", "history", "--junit", "junit.xml")
    assert result.exit_code == 0, result.output
    assert _trial_folders(tmp_path) == ["trial-1", "trial-2", "trial-3"]
    assert "3/3 (44–100%)" in result.output
    junit = (tmp_path / "junit.xml").read_text()
    for name, value in (
        ("pass_rate_ci95_low", "0.4385"),
        ("pass_rate_ci95_high", "1.0"),
        ("saved_trials", "7"),
    ):
        assert f'<property name="{name}" value="{value}" />' in junit
    assert "decided after 3 of 10 trials, 7 saved" in result.output
    assert "adaptive trials: 7 of 10 planned trials not needed" in result.output
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    (test,) = [t for t in suite["tests"] if t["id"] == "steady::fake"]
    props = test["properties"]
    assert (props["trials"], props["passed"], props["saved_trials"], props["verdict"]) == (3, 3, 7, "pass")
    assert (props["planned_trials"], props["min_trials"]) == (10, 3)
    assert (props["pass_rate_ci95_low"], props["pass_rate_ci95_high"]) == (0.4385, 1.0)
    (line,) = (tmp_path / "history/steady.jsonl").read_text().splitlines()
    assert json.loads(line)["extra"]["saved_trials"] == 7
    assert json.loads(line)["trials"] == 3


def test_a_verdict_that_is_not_decided_runs_every_wave(invoke: Invoke, tmp_path: Path) -> None:
    # pass_rate 1.0: 3/3 leaves a 4/11 chance of a miss later, so nothing stops before 10.
    _eval(tmp_path, "{max: 10, min: 3}", 1.0, "touch done.txt")
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    assert len(_trial_folders(tmp_path)) == 10
    assert "saved" not in result.output


def test_one_failure_decides_a_pass_rate_of_one(invoke: Invoke, tmp_path: Path) -> None:
    _eval(tmp_path, "{max: 10, min: 3}", 1.0, "true")
    result = invoke("eval", "evals", "--concurrency", "8")
    assert result.exit_code == 1, result.output
    # Waves keep the later trials from starting while the first three run, whatever the concurrency.
    assert _trial_folders(tmp_path) == ["trial-1", "trial-2", "trial-3"]
    assert "decided after 3 of 10 trials, 7 saved" in result.output


def test_adaptive_flag_gives_every_eval_a_minimum_of_three(invoke: Invoke, tmp_path: Path) -> None:
    _eval(tmp_path, "6", 0.5, "touch done.txt")
    result = invoke("eval", "evals", "--adaptive")
    assert result.exit_code == 0, result.output
    assert len(_trial_folders(tmp_path)) == 3
    plain = invoke("eval", "evals")
    assert len(_trial_folders(tmp_path)) == 6, plain.output


@pytest.mark.parametrize(
    ("trials", "message"),
    [
        ("{max: 3, min: 5}", "trials.min: 5 is more than max"),
        ("{min: 2}", "trials.max: is missing"),
        ("{max: 3, least: 1}", "least"),
    ],
)
def test_bad_adaptive_trials_are_clear_errors(
    invoke: Invoke, tmp_path: Path, trials: str, message: str
) -> None:
    _eval(tmp_path, trials, 0.5, "touch done.txt")
    result = invoke("validate", "evals")
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "steady.eval.yaml" in result.output
