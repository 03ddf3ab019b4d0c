"""Run an eval file in this process as a local run (``--unsafe-local``), for tests that look at outcomes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from trialbook.runner import RunOptions, RunReport, TrialOutcome, run


def run_local(path: Path, results_dir: Path, **options: Any) -> RunReport:
    """One local run of ``path`` into ``results_dir``, with this machine's ``PATH`` and nothing else.

    ``options``: more fields of :class:`RunOptions` (``concurrency``, ``isolation``).
    """
    environ = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    return run(
        RunOptions(paths=(path,), unsafe_local=True, results_dir=results_dir, environ=environ, **options)
    )


def run_outcomes(path: Path, results_dir: Path, concurrency: int) -> list[TrialOutcome]:
    """Every trial's outcome of one run of ``path`` (see :func:`run_local`)."""
    report = run_local(path, results_dir, concurrency=concurrency)
    return [outcome for result in report.results for outcome in result.outcomes]


def run_as_ci(evals: Path, runs_dir: Path, concurrency: int) -> RunReport:
    """One forced run of the eval files in ``evals`` as CI would make it, keeping no history."""
    options = RunOptions(
        paths=(evals,),
        runs_dir=runs_dir,
        record_history=False,
        force=True,
        unsafe_local=True,
        concurrency=concurrency,
        environ={**os.environ, "CI": "true"},
    )
    return run(options)


def write_script_eval(
    path: Path, script: str, *, trials: int, checks: str, prompt: str = "work", extra: str = ""
) -> Path:
    """The eval file ``path``: one script agent ``s`` running ``script``, ``trials`` trials, ``checks``.

    ``checks`` are the ``assert:`` list's YAML lines; ``extra`` top-level lines (``timeout: 120``).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"prompt_text: {prompt}\nagents: [{{name: s, script: {json.dumps(script)}}}]\n"
        f"{extra}trials: {trials}\nassert:\n{checks}"
    )
    return path
