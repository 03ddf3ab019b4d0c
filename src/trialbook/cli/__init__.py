"""The ``trialbook`` command line: one module per command, composed here."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__
from ._common import TrialbookGroup
from ._config import config_default_map
from .agents_cmd import agents_command
from .ci_cmd import ci_command
from .clean_cmd import clean_command
from .eval_cmd import eval_command
from .history_cmd import history_command
from .init_cmd import init_command
from .list_cmd import list_command
from .publish_cmd import publish_command
from .report_cmd import report_command
from .schema_cmd import schema_command
from .validate_cmd import validate_command
from .view_cmd import view_command

__all__ = ["cli", "main"]


@click.group(
    cls=TrialbookGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(__version__, "--version", prog_name="trialbook", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Run the prompts you ship through real coding agents and check what they did.

    Option defaults can be set in [tool.trialbook] of pyproject.toml or in trialbook.toml (see
    docs/configuration.md); a flag wins over its TRIALBOOK_<OPTION> variable, which wins over the file.
    """
    ctx.default_map = config_default_map(cli, Path.cwd())


for _command in (
    eval_command,
    validate_command,
    list_command,
    history_command,
    ci_command,
    publish_command,
    agents_command,
    report_command,
    view_command,
    init_command,
    schema_command,
    clean_command,
):
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point (also ``python -m trialbook``)."""
    # The command line as given, for a command that must re-execute itself (ci --stage run).
    cli(obj={"argv": sys.argv[1:]})
