"""The ``trialbook`` command line: one module per command, composed here and imported on first use."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__
from ._config import config_default_map
from ._lazy import LazyCommand, LazyGroup

__all__ = ["cli", "main"]

_COMMANDS = {
    "eval": LazyCommand(
        ".eval_cmd:eval_command",
        "Run eval files (or every eval under folders) through their agents and check the results.",
    ),
    "validate": LazyCommand(
        ".validate_cmd:validate_command",
        "Check eval files: keys, types, prompt files, placeholders, secrets declared, agents, patterns.",
    ),
    "list": LazyCommand(
        ".list_cmd:list_command", "List evals and agents, and whether each would run, with the reason."
    ),
    "history": LazyCommand(
        ".history_cmd:history_command",
        "Show each eval × agent's recent verdicts: pass-rate trend, agent version changes, cost, stability.",
    ),
    "ci": LazyCommand(
        ".ci_cmd:ci_command",
        "Run evals as the GitHub Actions event asks: changed prompts on a labelled PR, moved cache keys "
        "nightly.",
    ),
    "publish": LazyCommand(
        ".publish_cmd:publish_command",
        "Publish what `trialbook ci --stage run` left in one or more results folders.",
    ),
    "agents": LazyCommand(
        ".agents_cmd:agents_command",
        "List the registered agents, whether each is available here (and if not, why), and its version.",
    ),
    "rescore": LazyCommand(
        ".rescore_cmd:rescore_command",
        "Check RUN's recorded trials again with the current assertions, starting no agent (default: latest).",
    ),
    "report": LazyCommand(
        ".report_cmd:report_command",
        "Render RUN (a suite.json, a run or results folder; default: the latest run) for reading.",
    ),
    "view": LazyCommand(
        ".view_cmd:view_command",
        "Serve the viewer for RUN (default: the latest run) on 127.0.0.1 only; Ctrl-C stops it.",
    ),
    "init": LazyCommand(
        ".init_cmd:init_command",
        "Create DIRECTORY (default evals/) with an example eval, its prompt, a template and the schema.",
    ),
    "schema": LazyCommand(
        ".schema_cmd:schema_command",
        "Print the JSON Schema of eval files (point your editor's YAML language server at it).",
    ),
    "skills": LazyCommand(
        ".skills_cmd:skills_command",
        "Check the repository's skills and instruction files without running an agent.",
    ),
    "model": LazyCommand(
        ".model_cmd:model_command",
        "A scripted model on 127.0.0.1 for trying agent evals offline (see docs/tutorial.md).",
    ),
    "clean": LazyCommand(
        ".clean_cmd:clean_command",
        "Remove sandboxes and temp files left by trialbook runs whose process is gone (killed, crashed).",
    ),
}
"""Every command: where it is defined and the summary ``trialbook --help`` lists (checked by a test)."""


@click.group(
    cls=LazyGroup,
    lazy=_COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", prog_name="trialbook", message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Run the prompts you ship through real coding agents and check what they did.

    Option defaults can be set in [tool.trialbook] of pyproject.toml or in trialbook.toml (see
    docs/configuration.md); a flag wins over its TRIALBOOK_<OPTION> variable, which wins over the file.
    """
    ctx.default_map = config_default_map(cli, Path.cwd())


def main() -> None:
    """Console-script entry point (also ``python -m trialbook``)."""
    # The command line as given, for a command that must re-execute itself (ci --stage run).
    cli(obj={"argv": sys.argv[1:]})
