"""``trialbook validate``: check eval files without running anything."""

from __future__ import annotations

from pathlib import Path

import click

from ..runner import RunOptions, load_specs
from ._common import paths_argument

__all__ = ["validate_command"]


@click.command("validate")
@paths_argument()
def validate_command(paths: tuple[str, ...]) -> None:
    """Check eval files: keys, types, prompt files, placeholders, secrets declared, agents, patterns.

    Every problem of every file is reported at once, each naming the file, line and field. Exit code 2
    when anything is wrong.
    """
    specs = load_specs(RunOptions(paths=tuple(Path(p) for p in paths) or (Path("evals"),)))
    files = {spec.source for spec in specs}
    click.echo(f"ok: {len(specs)} eval(s) in {len(files)} file(s)")
