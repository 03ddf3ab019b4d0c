"""``--junit`` and ``--summary`` files that cannot be written: refused before a trial runs, or reported.

A path that cannot work (a file where a folder must be, a name too long for the filesystem) is found
before anything starts, exit code 2 naming the option and the path. One that breaks during the run (here
an agent replaces the folder with a file) is reported when the run ends, exit code 1, with the run's own
results in place; never a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Invoke, invoke, write

__all__ = ["invoke"]


def _eval(tmp_path: Path, script: str = "echo ok") -> None:
    write(
        tmp_path / "evals/e.eval.yaml",
        f"prompt_text: hi\nagents: [{{name: s, script: {json.dumps(script)}}}]\n",
    )


@pytest.mark.parametrize("option", ["--junit", "--summary"])
@pytest.mark.parametrize("dry_run", [False, True])
def test_a_path_under_a_file_is_refused_before_any_trial(
    invoke: Invoke, tmp_path: Path, option: str, dry_run: bool
) -> None:
    _eval(tmp_path)
    (tmp_path / "afile").write_text("mine\n")
    result = invoke("eval", "--results-dir", "out", option, "afile/report.xml", *(["--dry-run"] * dry_run))
    assert result.exit_code == 2, result.output
    assert f"{option} afile/report.xml: afile is not a folder; give a path inside a folder" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()  # nothing ran
    assert (tmp_path / "afile").read_text() == "mine\n"


def test_a_name_too_long_for_the_filesystem_is_refused_before_any_trial(
    invoke: Invoke, tmp_path: Path
) -> None:
    _eval(tmp_path)
    name = "x" * 300 + ".md"
    result = invoke("eval", "--results-dir", "out", "--summary", name)
    assert result.exit_code == 2, result.output
    assert f"--summary {name}: File name too long; choose another path" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("as_json", [False, True])
def test_a_folder_an_agent_replaces_with_a_file_is_reported_after_the_run(
    invoke: Invoke, tmp_path: Path, as_json: bool
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    _eval(tmp_path, f"rm -r {reports} && echo hostile > {reports}")
    args = ["eval", "--results-dir", "out", "--junit", "reports/junit.xml", "--summary", "summary.md"]
    result = invoke(*args, *(["--json"] * as_json))
    assert result.exit_code == 1, result.output
    assert "error: could not write --junit reports/junit.xml: File exists; the run's results are in" in (
        result.stderr
    )
    assert "Traceback" not in result.output
    # The run itself is whole, the other file is written, and the agent's file is left as it made it.
    assert json.loads((tmp_path / "out/manifest.json").read_text())["pairs"][0]["verdict"] == "pass"
    assert "e" in (tmp_path / "summary.md").read_text()
    assert reports.read_text() == "hostile\n"
    if as_json:
        assert json.loads(result.stdout)["exit_code"] == 1
