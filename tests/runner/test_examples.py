"""README command 1: the bundled examples pass with the literal agent, and leave complete results."""

from __future__ import annotations

import json
from pathlib import Path

from trialbook.evidence import load_suite

from .conftest import EXAMPLES, Invoke, write


def test_examples_pass_with_literal_and_write_results(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("eval", str(EXAMPLES / "evals"), "--junit", "junit.xml", "--summary", "summary.md")
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    ids = sorted(test.id for test in suite.tests)
    assert ids == ["config-check::literal", "deploy::literal", "quick-init::literal"]
    assert all(test.outcome == "passed" for test in suite.tests)
    deploy = next(test for test in suite.tests if test.id == "deploy::literal")
    assert len(deploy.executions) == 2
    for trial in (1, 2):
        folder = tmp_path / f".trialbook/runs/latest/evals/deploy/literal/trial-{trial}"
        calls = [json.loads(line) for line in (folder / "calls.jsonl").read_text().splitlines()]
        assert [c["argv"][:2] for c in calls] == [
            ["acme", "init"],
            ["acme", "env"],
            ["python3", "app/check.py"],
            ["acme", "deploy"],
        ]
        document = json.loads((folder / "result.json").read_text())
        assert all(a["passed"] for a in document["assertions"])
    assert "deploy" in (tmp_path / "summary.md").read_text()
    junit = (tmp_path / "junit.xml").read_text()
    assert 'tests="3"' in junit
    # The literal agent has no model: the property is left out rather than written as value="None".
    assert 'value="None"' not in junit and 'name="model"' not in junit
    assert "deploy" in result.output and "pass" in result.output


def test_refuses_to_run_agents_outside_ci_without_unsafe_local(invoke: Invoke) -> None:
    result = invoke("eval", str(EXAMPLES / "evals"), env={"CI": ""})
    assert result.exit_code == 2
    assert "--unsafe-local" in result.output
    assert not Path(".trialbook/runs/latest/suite.json").exists()


def test_unsafe_local_allows_a_local_run(invoke: Invoke) -> None:
    result = invoke(
        "eval", str(EXAMPLES / "evals" / "quick-init.eval.yaml"), "--unsafe-local", env={"CI": ""}
    )
    assert result.exit_code == 0, result.output


def test_dry_run_prints_the_plan_and_runs_nothing(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("eval", str(EXAMPLES / "evals"), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "run       deploy [literal]" in result.output
    assert "3 eval × agent pairs to run (4 trials)" in result.output
    assert not (tmp_path / ".trialbook").exists()


def test_dry_run_outside_ci_starts_nothing_so_it_needs_no_ci_and_says_what_the_real_run_will(
    invoke: Invoke, tmp_path: Path
) -> None:
    result = invoke("eval", str(EXAMPLES / "evals"), "--dry-run", env={"CI": ""})
    assert result.exit_code == 0, result.output
    assert "3 eval × agent pairs to run (4 trials)" in result.output
    assert "the real run would refuse to start" not in result.output
    assert "warning: the real run here needs CI=true or --unsafe-local" in result.output
    assert not (tmp_path / ".trialbook").exists()
    real = invoke("eval", str(EXAMPLES / "evals"), env={"CI": ""})
    assert real.exit_code == 2 and "Set CI=true in CI, or pass --unsafe-local" in real.output
    allowed = invoke("eval", str(EXAMPLES / "evals"), "--dry-run", "--unsafe-local", env={"CI": ""})
    assert allowed.exit_code == 0, allowed.output


def test_dry_run_names_an_unset_declared_secret(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/s.eval.yaml",
        "prompt_text: 'use {{ secrets.API_KEY }}'\nsecrets: [API_KEY]\nagents: [literal]\n",
    )
    result = invoke("eval", "evals", "--dry-run", env={"API_KEY": None})
    assert result.exit_code == 2, result.output
    assert "API_KEY" in result.output.split("the real run would refuse to start")[1]
    assert invoke("eval", "evals", "--dry-run", env={"API_KEY": "key-1234"}).exit_code == 0
