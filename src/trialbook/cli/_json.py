"""``--json`` output: one documented, versioned JSON document per command on stdout.

Every document has ``kind`` (which command made it) and ``version`` (bumped only when a field is removed
or changes meaning; new fields may appear). The shapes are committed as JSON Schemas in docs/schemas/ and
tests validate real output against them. Secrets are masked like everywhere else.
"""

from __future__ import annotations

import json
from typing import Any

import click

from ..errors import ExitCode
from ..evidence import JsonObject, JsonValue
from ..runner import RunOptions, RunReport, pair_json
from ._output import write_report_files

__all__ = ["JSON_VERSION", "document", "echo_json", "emit_json", "plan_json", "run_json"]

JSON_VERSION = 1


def document(kind: str, **fields: Any) -> JsonObject:
    """A document of ``kind`` with the common header."""
    return {"kind": kind, "version": JSON_VERSION, **fields}


def echo_json(value: JsonValue) -> None:
    """Print ``value`` as pretty JSON (UTF-8, no NaN) on stdout."""
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False))


def plan_json(report: RunReport) -> JsonObject:
    """``list --json`` and ``eval --dry-run --json``: every pair's decision and reason."""
    runnable = [entry for entry in report.plan if entry.action == "run"]
    value = document(
        "list",
        pairs=[pair_json(entry) for entry in report.plan],
        to_run=len(runnable),
        trials=sum(entry.spec.trials for entry in runnable),
        refusals=list(report.refusals),
    )
    masked = report.masker.json(value)
    assert isinstance(masked, dict)
    return masked


def run_json(report: RunReport, exit_code: int) -> JsonObject:
    """``eval --json``: the run's manifest, where its folder is, and how the run ended."""
    manifest: JsonObject = dict(report.manifest or {})
    value: JsonObject = {
        **manifest,
        "folder": str(report.run_folder) if report.run_folder is not None else None,
        "exit_code": exit_code,
        "history_error": report.history_error,
        "durability_error": report.durability_error,
    }
    masked = report.masker.json(value)
    assert isinstance(masked, dict)
    return masked


def emit_json(report: RunReport, options: RunOptions) -> int:
    """``eval --json``: print the document (the plan for a dry run), write the files; the exit code."""
    if report.dry_run:
        echo_json(plan_json(report))
        return ExitCode.BAD_INPUT if report.refusals else ExitCode.OK
    code = write_report_files(report, options)
    echo_json(run_json(report, code))
    return code
