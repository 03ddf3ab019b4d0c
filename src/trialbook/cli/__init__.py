"""The ``trialbook`` command line: one module per command, composed here."""

from __future__ import annotations

import click

from .. import __version__

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "auto_envvar_prefix": "TRIALBOOK"})
@click.version_option(__version__, "--version", prog_name="trialbook", message="%(prog)s %(version)s")
def cli() -> None:
    """Run the prompts you ship through real coding agents and check what they did."""


def main() -> None:
    """Console-script entry point."""
    cli()
