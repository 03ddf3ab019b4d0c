"""``trialbook validate``: check eval files without running anything."""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from ..errors import ConfigError, ExitCode, TrialbookError
from ..evalfiles import EvalSpec, shared_family_warnings
from ..evidence import JsonObject
from ..runner import RunOptions, load_specs, run_secrets
from ._common import paths_argument
from ._json import document, echo_json

__all__ = ["validate_command"]

# ``file:line: field: message``, the way every eval-file problem is worded.
_PROBLEM = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<field>[^:\n]+): (?P<message>.*)$", re.S)


def _problem_json(text: str) -> JsonObject:
    found = _PROBLEM.match(text)
    if found is None:
        return {"file": None, "line": None, "field": None, "message": text}
    return {
        "file": found["file"],
        "line": int(found["line"]),
        "field": found["field"],
        "message": found["message"],
    }


def _load(options: RunOptions) -> list[EvalSpec]:
    specs = load_specs(options)
    # A credential too short to mask would refuse `eval`: say so now. Only what the files hold (and the
    # declared secrets set here): the environment a run passes to agents is the run's to check.
    secrets = run_secrets(specs, os.environ, passed_through=False)
    if secrets.problems:
        raise ConfigError(secrets.problems)
    for warning in secrets.warnings:
        click.echo(f"warning: {warning}", err=True)
    for spec in specs:
        for warning in shared_family_warnings(spec):
            click.echo(f"warning: {warning}", err=True)
    return specs


@click.command("validate")
@paths_argument()
@click.option(
    "--json", "as_json", is_flag=True, help="Print the outcome as JSON (docs/schemas/validate.schema.json)."
)
def validate_command(paths: tuple[str, ...], as_json: bool) -> None:
    """Check eval files: keys, types, prompt files, placeholders, secrets declared, agents, patterns.

    Every problem of every file is reported at once, each naming the file, line and field. Exit code 2
    when anything is wrong, including a credential too short to mask (one to three characters), which
    `eval` would refuse: one written in an agent's options, or a declared secret set in the environment.
    """
    options = RunOptions(paths=tuple(Path(p) for p in paths) or (Path("evals"),))
    if not as_json:
        specs = _load(options)
        files = {spec.source for spec in specs}
        click.echo(f"ok: {len(specs)} eval(s) in {len(files)} file(s)")
        return
    try:
        specs = _load(options)
    except ConfigError as exc:
        echo_json(document("validate", ok=False, evals=[], problems=[_problem_json(p) for p in exc.problems]))
        raise SystemExit(exc.exit_code) from None
    except TrialbookError as exc:
        echo_json(document("validate", ok=False, evals=[], problems=[_problem_json(str(exc))]))
        raise SystemExit(exc.exit_code) from None
    evals: list[JsonObject] = [
        {"id": spec.id, "file": str(spec.source), "agents": [agent.name for agent in spec.agents]}
        for spec in specs
    ]
    echo_json(document("validate", ok=True, evals=list(evals), problems=[]))
    raise SystemExit(ExitCode.OK)
