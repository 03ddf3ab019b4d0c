"""The action hands its inputs to ``trialbook ci`` as TRIALBOOK_* variables: each must reach an option."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from trialbook.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_the_action_sets_is_an_option_of_ci() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    (step,) = [step for step in action["runs"]["steps"] if step.get("id") == "run"]
    given = {name for name in step["env"] if name.startswith("TRIALBOOK_")}
    command = cli.commands["ci"]
    accepted = {
        param.envvar
        for param in command.params
        if isinstance(param, click.Option) and isinstance(param.envvar, str)
    }
    assert given, "the run step passes no TRIALBOOK_* variables"
    assert given <= accepted, f"not read by trialbook ci: {sorted(given - accepted)}"
    assert 'trialbook" ci ' in step["run"]
