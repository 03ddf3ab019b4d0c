"""The documentation keeps up with the code."""

from __future__ import annotations

from pathlib import Path

from trialbook.cli import cli
from trialbook.cli._docgen import render_cli_reference

ROOT = Path(__file__).resolve().parents[2]


def test_cli_reference_is_current() -> None:
    committed = (ROOT / "docs/cli.md").read_text()
    assert committed == render_cli_reference(), (
        "docs/cli.md is stale: run `uv run --frozen python -m trialbook.cli._docgen > docs/cli.md`"
    )


def test_every_command_has_help_text() -> None:
    for name, command in cli.commands.items():
        assert command.help and len(command.help) > 20, f"trialbook {name} lacks a description"


def test_examples_schema_is_current() -> None:
    from trialbook.cli.schema_cmd import schema_text

    committed = (ROOT / "examples/evals/trialbook.schema.json").read_text()
    assert committed == schema_text(), (
        "examples/evals/trialbook.schema.json is stale: run "
        "`uv run --frozen trialbook schema > examples/evals/trialbook.schema.json`"
    )
