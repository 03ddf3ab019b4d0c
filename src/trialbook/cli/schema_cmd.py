"""``trialbook schema``: the JSON Schema of eval files, for editors."""

from __future__ import annotations

import json

import click

from ..evalfiles import eval_file_schema

__all__ = ["schema_command", "schema_text"]


def schema_text() -> str:
    """The schema as pretty JSON text."""
    return json.dumps(eval_file_schema(), indent=2, sort_keys=True) + "\n"


@click.command("schema")
def schema_command() -> None:
    """Print the JSON Schema of eval files (point your editor's YAML language server at it)."""
    click.echo(schema_text(), nl=False)
