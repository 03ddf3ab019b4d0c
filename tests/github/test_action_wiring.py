"""The action hands its inputs to trialbook as TRIALBOOK_* variables: each must reach an option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
import yaml

from trialbook.cli import cli

ROOT = Path(__file__).resolve().parents[2]
STEPS = {
    # step id: (command it runs, whether it may hold the GitHub token)
    "fetch": ("ci", True),
    "run": ("ci", False),
    "publish": ("publish", True),
}


def _steps() -> dict[str, dict[str, Any]]:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    return {step["id"]: step for step in action["runs"]["steps"] if step.get("id") in STEPS}


@pytest.mark.parametrize("step_id", sorted(STEPS))
def test_every_variable_a_step_sets_is_an_option_of_its_command(step_id: str) -> None:
    step = _steps()[step_id]
    name, _ = STEPS[step_id]
    given = {variable for variable in step["env"] if variable.startswith("TRIALBOOK_")}
    command = cli.commands[name]
    accepted = {
        param.envvar
        for param in command.params
        if isinstance(param, click.Option) and isinstance(param.envvar, str)
    }
    assert given, f"the {step_id} step passes no TRIALBOOK_* variables"
    assert given <= accepted, f"not read by trialbook {name}: {sorted(given - accepted)}"
    assert f'trialbook" {name}' in step["run"]


def test_only_the_fetch_and_publish_steps_hold_the_token() -> None:
    steps = _steps()
    for step_id, (_, may_hold) in STEPS.items():
        env = steps[step_id]["env"]
        holds = any("token" in str(value) for value in env.values()) or any("TOKEN" in name for name in env)
        assert holds is may_hold, f"step {step_id}: holds the token = {holds}"
    assert "--stage run" in steps["run"]["run"]
    assert "--stage fetch" in steps["fetch"]["run"]


def test_no_input_shares_a_name_with_a_job_keyword() -> None:
    # `with: {concurrency: 2}` beside a job's own `concurrency:` reads as the job's setting to people.
    keywords = {"concurrency", "env", "permissions", "timeout-minutes", "continue-on-error", "environment"}
    inputs = set(yaml.safe_load((ROOT / "action.yml").read_text())["inputs"])
    assert not inputs & keywords
    assert "max-concurrency" in inputs
