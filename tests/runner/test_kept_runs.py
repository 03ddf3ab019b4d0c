"""Runs are kept under .trialbook/runs/ with a ``latest`` link and a limit; --last-failed reads the latest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema

from trialbook.evidence import load_suite
from trialbook.runner._folder import MARKER

from .conftest import Invoke, invoke, write
from .gitrepo import commit_all, git, make_repo

__all__ = ["invoke"]


def _runs(tmp_path: Path) -> list[str]:
    root = tmp_path / ".trialbook/runs"
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.is_symlink())


def _mixed(tmp_path: Path) -> None:
    """``good`` passes; ``bad`` fails with literal and errors with a script agent exiting 3."""
    write(
        tmp_path / "evals/good.eval.yaml", "prompt_text: hi\nagents: [literal, {name: s, script: 'true'}]\n"
    )
    write(
        tmp_path / "evals/bad.eval.yaml",
        "prompt_text: hi\nagents: [literal, {name: s, script: 'exit 3'}]\nassert:\n  - file_exists: x\n",
    )


def test_two_runs_leave_two_folders_and_a_latest_link(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    assert invoke("eval").exit_code == 0
    first = _runs(tmp_path)
    assert invoke("eval").exit_code == 0
    runs = _runs(tmp_path)
    (second,) = set(runs) - set(first)
    assert len(runs) == 2 and len(first) == 1
    latest = tmp_path / ".trialbook/runs/latest"
    assert latest.is_symlink() and os.readlink(latest) == second
    for run in runs:
        folder = tmp_path / ".trialbook/runs" / run
        assert (folder / MARKER).is_file()
        manifest = json.loads((folder / "manifest.json").read_text())
        assert manifest["run_id"] == run
        load_suite(folder / "suite.json")
    report = invoke("report")
    assert report.exit_code == 0, report.output
    assert "e" in report.output and "1 passed" in report.output
    assert invoke("report", f".trialbook/runs/{first[0]}").exit_code == 0


def test_retention_keeps_the_last_n_and_nothing_else_is_touched(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    write(tmp_path / ".trialbook/runs/notes.txt", "mine\n")
    assert invoke("eval").exit_code == 2  # a runs folder that is not trialbook's is refused
    (tmp_path / ".trialbook/runs/notes.txt").unlink()
    assert invoke("eval").exit_code == 0
    write(tmp_path / ".trialbook/runs/notes.txt", "mine\n")
    (tmp_path / ".trialbook/runs/20000101T000000Z-aaaaaa").mkdir()  # looks like a run, has no marker
    made = []
    for _ in range(3):
        assert invoke("eval", "--keep-runs", "2").exit_code == 0
        made.append(os.readlink(tmp_path / ".trialbook/runs/latest"))
    runs = [r for r in _runs(tmp_path) if r != "20000101T000000Z-aaaaaa"]
    assert sorted(runs) == sorted(made[-2:])  # the last two, however the same second orders their names
    assert (tmp_path / ".trialbook/runs/notes.txt").read_text() == "mine\n"
    assert (tmp_path / ".trialbook/runs/20000101T000000Z-aaaaaa").is_dir()
    bad = invoke("eval", "--keep-runs", "0")
    assert bad.exit_code == 2 and "--keep-runs" in bad.output


def test_last_failed_runs_exactly_the_failed_pairs(invoke: Invoke, tmp_path: Path) -> None:
    _mixed(tmp_path)
    assert invoke("eval").exit_code == 1
    first = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    again = invoke("eval", "--last-failed")
    assert again.exit_code == 1, again.output
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    ran = {(p["id"], p["agent"]) for p in manifest["pairs"] if p["result"] is not None}
    assert ran == {("bad", "literal"), ("bad", "s")}
    reasons = {(p["id"], p["agent"]): p["reason"] for p in manifest["pairs"] if p["result"] is None}
    assert reasons == {
        ("good", "literal"): f"did not fail in the latest run ({first['run_id']})",
        ("good", "s"): f"did not fail in the latest run ({first['run_id']})",
    }
    assert manifest["selection"]["last_failed"] is True
    # Fix one: only the other still fails, and then nothing is left to run.
    write(
        tmp_path / "evals/bad.eval.yaml", "prompt_text: hi\nagents: [literal, {name: s, script: 'exit 3'}]\n"
    )
    assert invoke("eval", "--last-failed").exit_code == 1
    listed = invoke("list", "--last-failed")
    assert [line.split()[:3] for line in listed.output.splitlines() if line.startswith("run ")] == [
        ["run", "bad", "[s]"]
    ]


def test_last_failed_with_nothing_failed_says_so_runs_nothing_and_keeps_latest(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "evals/good.eval.yaml", "prompt_text: hi\nagents: [{name: s, script: 'true'}]\n")
    assert invoke("eval").exit_code == 0
    latest = os.readlink(tmp_path / ".trialbook/runs/latest")
    again = invoke("eval", "--last-failed")
    assert again.exit_code == 0, again.output
    assert f"--last-failed: no pair failed in the latest run ({latest})" in again.output
    assert "filtered" not in again.output  # no table of pairs that were left out
    assert os.readlink(tmp_path / ".trialbook/runs/latest") == latest
    assert _runs(tmp_path) == [latest]
    assert "skipped" not in invoke("report").output  # the report still shows the run the user meant


def test_last_failed_without_an_earlier_run_is_an_error(invoke: Invoke, tmp_path: Path) -> None:
    _mixed(tmp_path)
    result = invoke("eval", "--last-failed")
    assert result.exit_code == 2
    assert "no earlier run" in result.output


def test_last_failed_reads_the_results_dir_in_ci(invoke: Invoke, tmp_path: Path) -> None:
    _mixed(tmp_path)
    assert invoke("eval", "--results-dir", "out").exit_code == 1
    again = invoke("eval", "--results-dir", "out", "--last-failed", "--filter", "bad")
    assert again.exit_code == 1
    suite = load_suite(tmp_path / "out/suite.json")
    assert sorted(t.id for t in suite.tests if t.executions) == ["bad::literal", "bad::s"]
    assert not (tmp_path / ".trialbook").exists()


def test_the_manifest_says_why_pairs_did_not_run(invoke: Invoke, tmp_path: Path) -> None:
    _mixed(tmp_path)
    assert invoke("eval", "--history-dir", "h", "--filter", "good").exit_code == 0
    assert invoke("eval", "--history-dir", "h").exit_code == 1
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    actions = {(p["id"], p["agent"]): (p["action"], p["verdict"]) for p in manifest["pairs"]}
    assert actions == {
        ("good", "literal"): ("cached", "pass"),
        ("good", "s"): ("cached", "pass"),
        ("bad", "literal"): ("run", "fail"),
        ("bad", "s"): ("run", "error"),
    }
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs/schemas/run.schema.json").read_text())
    jsonschema.validate(manifest, schema, cls=jsonschema.Draft202012Validator)
    cached = next(p for p in manifest["pairs"] if p["action"] == "cached")
    assert cached["reason"] == "unchanged since the last run, which ended 'pass'"


def test_kept_runs_leave_git_status_clean(invoke: Invoke, tmp_path: Path) -> None:
    work, _ = make_repo(tmp_path / "repo")
    write(work / "evals/one.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    commit_all(work, "evals")
    os.chdir(work)
    for _ in range(2):
        assert invoke("eval").exit_code == 0
    assert git(work, "status", "--porcelain", "--untracked-files=all") == ""
    assert not (work / ".gitignore").exists() and not (work / ".trialbook/.gitignore").exists()


def test_the_manifest_holds_exactly_the_history_lines_recorded(invoke: Invoke, tmp_path: Path) -> None:
    _mixed(tmp_path)
    assert invoke("eval", "--history-dir", "h").exit_code == 1
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    recorded = [
        json.loads(line)
        for name in ("bad", "good")
        for line in (tmp_path / f"h/{name}.jsonl").read_text().splitlines()
    ]
    key = lambda line: (line["id"], line["agent"])  # noqa: E731
    assert sorted(manifest["history_lines"], key=key) == sorted(recorded, key=key)
    assert len(recorded) == 4


def test_the_kept_runs_folder_is_not_taken_for_a_results_folder(invoke: Invoke, tmp_path: Path) -> None:
    """Swapping a run over the kept runs would hand every kept run "back" as a file of the user's."""
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    assert invoke("eval").exit_code == 0
    assert invoke("eval", "--results-dir", "out").exit_code == 0
    runs = _runs(tmp_path)
    for dry in ([], ["--dry-run"]):
        result = invoke("eval", "--force", "--results-dir", ".trialbook/runs", *dry)
        assert result.exit_code == 2, result.output
        assert "is the folder of kept runs of trialbook's; choose another folder" in result.output
    assert _runs(tmp_path) == runs
    assert (tmp_path / "out/suite.json").is_file()
