"""``trialbook.run`` hands back one frozen report: each step of the run made a new one, none changes it later.

A front end (or a library caller) holding the report reads what the run decided. Nothing can assign a
field or grow one of its sequences afterwards, and what each step learnt (the plan, the results, the
warnings the trials raised, the history lines) is on the report the call returns.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest

from trialbook.runner import RunOptions, RunReport, run

SEQUENCES = ("plan", "results", "controls", "warnings", "noticed", "refusals", "history_problems")


def _options(tmp_path: Path, *, dry_run: bool = False) -> RunOptions:
    evals = tmp_path / "evals"
    evals.mkdir(exist_ok=True)
    (evals / "hi.eval.yaml").write_text(
        "prompt_text: hi\nagents: [{name: s, script: 'echo hi > out.txt'}]\ntrials: 2\n"
        "assert:\n  - file_contains: {path: out.txt, pattern: hi}\n"
    )
    return RunOptions(
        paths=(evals,),
        runs_dir=tmp_path / "runs",
        history_dir=tmp_path / "history",
        unsafe_local=True,
        dry_run=dry_run,
        environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
    )


def _assert_frozen(report: RunReport) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.results = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.warnings = ("added later",)  # type: ignore[misc]
    kinds = {name: type(getattr(report, name)).__name__ for name in SEQUENCES}
    assert kinds == dict.fromkeys(SEQUENCES, "tuple")


def test_a_finished_run_returns_a_frozen_report_with_what_every_step_decided(tmp_path: Path) -> None:
    report = run(_options(tmp_path))
    _assert_frozen(report)
    assert [result.verdict for result in report.results] == ["pass"]
    assert [entry.key for entry in report.plan] == [result.entry.key for result in report.results]
    assert len(report.controls) == 1  # the eval's negative control, planned before the trials
    assert report.results[0].control is not None
    assert report.run_folder is not None and report.suite_path == report.run_folder / "suite.json"
    assert report.suite is not None and report.manifest is not None
    assert report.history_lines is not None and len(report.history_lines) == 1
    manifest = json.loads((report.run_folder / "manifest.json").read_text())
    assert manifest["run_id"] == report.run_id
    assert manifest["history_lines"] == [line.to_json() for line in report.history_lines]
    assert (report.history_error, report.history_problems) == (None, ())
    assert report.exit_code == 0


def test_a_dry_run_returns_a_frozen_report_that_started_nothing(tmp_path: Path) -> None:
    report = run(_options(tmp_path, dry_run=True))
    _assert_frozen(report)
    assert report.dry_run and report.results == () and report.refusals == ()
    assert [entry.action for entry in report.plan] == ["run"]
    assert report.run_id is None and not (tmp_path / "runs").exists()
