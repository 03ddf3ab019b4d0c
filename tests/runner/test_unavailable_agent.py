"""An agent that cannot run here fails only its own pairs, naming the fix; --strict-agents refuses the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Invoke, invoke, write

__all__ = ["invoke"]

EVAL = """
prompt_text: |
  ```bash
  touch made.txt
  ```
agents: [literal, claude-code]
negative_control: false
assert:
  - file_exists: made.txt
"""


@pytest.fixture
def no_claude(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # bash and coreutils, no claude
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-used-" + "a1" * 12)
    write(tmp_path / "evals/setup.eval.yaml", EVAL)


def test_the_other_agents_run_and_the_missing_ones_pairs_are_errors_with_the_fix(
    invoke: Invoke, tmp_path: Path, no_claude: None
) -> None:
    result = invoke("eval", "evals")
    assert result.exit_code == 1, result.output
    assert "warning: agent claude-code (evals/setup.eval.yaml:" in result.output
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    verdicts = {p["agent"]: p["verdict"] for p in manifest["pairs"]}
    assert verdicts == {"literal": "pass", "claude-code": "error"}
    trial = json.loads(
        (tmp_path / ".trialbook/runs/latest/evals/setup/claude-code/trial-1/result.json").read_text()
    )
    error = trial["result"]["error"] if "result" in trial else trial["error"]
    assert "'claude' binary was not found on PATH" in error
    assert "npm install -g @anthropic-ai/claude-code" in error
    assert "to run the others only, pass --agent literal" in error
    (line,) = [line for line in result.output.splitlines() if "setup [claude-code] trial 1:" in line]
    assert "ERROR (execution_error" in line


def test_strict_agents_refuses_the_run_before_any_trial(
    invoke: Invoke, tmp_path: Path, no_claude: None
) -> None:
    result = invoke("eval", "evals", "--strict-agents")
    assert result.exit_code == 2, result.output
    assert "cannot start the run:" in result.output and "'claude' binary was not found" in result.output
    assert not (tmp_path / ".trialbook/runs").exists() or not list(
        (tmp_path / ".trialbook/runs").glob("*/evals")
    )


def test_a_dry_run_says_what_the_real_run_would_do_with_a_missing_agent(
    invoke: Invoke, tmp_path: Path, no_claude: None
) -> None:
    dry = invoke("eval", "evals", "--dry-run")
    assert dry.exit_code == 0, dry.output  # the real run would start, and end 1 with the pair as an error
    assert "would refuse to start" not in dry.output
    assert "'claude' binary was not found" in dry.output and "its pairs would end as errors" in dry.output
    strict = invoke("eval", "evals", "--dry-run", "--strict-agents")
    assert strict.exit_code == 2, strict.output
    assert "would refuse to start" in strict.output and "'claude' binary was not found" in strict.output
