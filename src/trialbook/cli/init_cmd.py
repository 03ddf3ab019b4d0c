"""``trialbook init``: scaffold an evals folder with a working example."""

from __future__ import annotations

from pathlib import Path

import click

from .._util.fsutil import atomic_write_text
from ..errors import UsageError
from ._starter import STARTER, STARTER_NAME
from .schema_cmd import schema_text

__all__ = ["init_command"]

_EVAL = """\
# yaml-language-server: $schema=./trialbook.schema.json
# Runs prompts/hello.md in a fresh copy of template/ and checks what was done.
prompt: prompts/hello.md
params: {name: world}
agents: [literal]
trials: 1
sandbox: {template: template/}
shims:
  greet: {script: 'echo "hello, $1"'}
assert:
  - ran: greet {{name}}
  - file_exists: hello.txt
  - file_contains: {path: hello.txt, pattern: "hello, world"}
  - succeeds: test -s hello.txt
timeout: 2m
"""

_PROMPT = """\
# Say hello

Greet {{ name }} and keep the greeting:

```bash
greet {{ name }} > hello.txt
```
"""

_TEMPLATE_README = "This folder is copied fresh into every trial's sandbox.\n"


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), required=False)
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--pytest",
    "pytest_starter",
    is_flag=True,
    help=f"Write a passing pytest starter instead: DIRECTORY (default tests/)/{STARTER_NAME}, a Copilot "
    "test against a scripted loopback model with a custom tool.",
)
def init_command(directory: Path | None, force: bool, pytest_starter: bool) -> None:
    """Create DIRECTORY (default evals/) with an example eval, its prompt, a template and the schema."""
    if pytest_starter:
        directory = directory or Path("tests")
        files = {directory / STARTER_NAME: STARTER}
    else:
        directory = directory or Path("evals")
        files = {
            directory / "hello.eval.yaml": _EVAL.replace("{{name}}", "world"),
            directory / "prompts" / "hello.md": _PROMPT,
            directory / "template" / "README.md": _TEMPLATE_README,
            directory / "trialbook.schema.json": schema_text(),
        }
    existing = [str(path) for path in files if path.exists()]
    if existing and not force:
        raise UsageError(f"{', '.join(existing)} already exist(s); pass --force to overwrite")
    for path, text in files.items():
        atomic_write_text(path, text)
        click.echo(f"wrote {path}")
    if pytest_starter:
        click.echo(f"next: pytest {directory / STARTER_NAME} --trialbook-unsafe-local   (CI=true in CI)")
    else:
        click.echo(f"next: CI=true trialbook eval {directory}   (or --unsafe-local on your machine)")
