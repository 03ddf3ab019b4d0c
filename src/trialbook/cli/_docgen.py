"""Generate docs/cli.md from the commands' own ``--help`` so the reference cannot drift.

``uv run --frozen python -m trialbook.cli._docgen > docs/cli.md`` regenerates it; a test fails when the
committed file differs.
"""

from __future__ import annotations

from typing import Any

import click

__all__ = ["render_cli_reference"]

_INTRO = """\
# Command-line reference

This page is generated from `trialbook --help` and each command's `--help`
(`uv run --frozen python -m trialbook.cli._docgen > docs/cli.md`); a test keeps it current.

Every option of `eval` can also be set with an environment variable `TRIALBOOK_<OPTION>`, e.g.
`TRIALBOOK_CONCURRENCY=8` or `TRIALBOOK_BUDGET_USD=5`, and any option of any command in
`[tool.trialbook]` of `pyproject.toml` or in `trialbook.toml` ([configuration](configuration.md)):
a flag wins over its variable, which wins over the file.

`--json` on `list`, `agents`, `validate` and `eval` prints one versioned document whose JSON Schema is
in [schemas/](schemas/) ([run folders](runs.md) describes the run document).

Exit codes: `0` every selected eval passed (cached ones included), `1` an eval failed or errored,
`2` bad input or a refused run, `3` the budget stopped the run before every selected trial ran
(or, with `--budget-strict`, the forecast was above `--budget-usd` and nothing started), `130`/`143`
SIGINT/SIGTERM cancelled the run (what finished is written, see [Processes](processes.md)).
"""


# The same settings the group is declared with, so the page does not depend on what ran before.
_SETTINGS: dict[str, Any] = {"help_option_names": ["-h", "--help"]}


def _help(command: click.Command, name: str, parent: click.Context | None) -> str:
    ctx = click.Context(
        command, info_name=name, parent=parent, terminal_width=100, max_content_width=100, **_SETTINGS
    )
    return command.get_help(ctx)


def render_cli_reference() -> str:
    """The whole reference page as Markdown."""
    from . import cli  # the group imports every command module

    root = click.Context(cli, info_name="trialbook", terminal_width=100, max_content_width=100, **_SETTINGS)
    parts = [_INTRO, "## trialbook\n", "```text\n" + cli.get_help(root) + "\n```\n"]
    for name in sorted(cli.commands):
        command = cli.commands[name]
        parts.append(f"## trialbook {name}\n")
        parts.append("```text\n" + _help(command, name, root) + "\n```\n")
        if isinstance(command, click.Group):  # ``skills check``: each subcommand gets its own section
            group = click.Context(command, info_name=name, parent=root, **_SETTINGS)
            for sub in sorted(command.commands):
                parts.append(f"### trialbook {name} {sub}\n")
                parts.append("```text\n" + _help(command.commands[sub], sub, group) + "\n```\n")
    return "\n".join(parts)


if __name__ == "__main__":
    click.echo(render_cli_reference(), nl=False)
