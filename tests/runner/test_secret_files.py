"""Short secrets and control characters through the real CLI: every file trialbook writes re-reads."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from trialbook.evidence import load_suite

from .conftest import Invoke, write

SHORT_SECRET_EVAL = """
    prompt_text: |
      ```bash
      echo "the value is {{ secrets.TK }}; tests and testing go on"
      ```
    secrets: [TK]
    agents: [literal]
    assert:
      - succeeds: {command: "echo tests for test-writers; exit 1"}
    """


def test_a_four_character_secret_warns_and_every_file_stays_well_formed(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "evals/short.eval.yaml", SHORT_SECRET_EVAL)
    result = invoke(
        "eval",
        "evals",
        "--results-dir",
        "results",
        "--junit",
        "junit.xml",
        "--summary",
        "summary.md",
        env={"TK": "test"},
    )
    assert result.exit_code == 1, result.output
    assert "TK is 4 characters long" in result.output
    suite_path = tmp_path / "results/suite.json"
    suite = load_suite(suite_path)
    raw = json.loads(suite_path.read_text())
    assert "tests" in raw and "outcome_counts" in raw
    assert suite.tests[0].outcome == "failed"
    junit = (tmp_path / "junit.xml").read_text()
    root = ET.fromstring(junit.encode())
    assert root.tag == "testsuite" and root.attrib["tests"] == "1"
    assert junit.startswith('<?xml version="1.0"')
    # The word is masked wherever the agent or the check printed it: a 4-character value is masked as asked.
    for path in (tmp_path / "results").rglob("*"):
        if path.is_file() and path.name != ".gitignore":
            data = path.read_text(errors="replace")
            if path.suffix == ".json":
                json.loads(data)
            assert "tests for" not in data, path
    report = invoke("report", str(suite_path))
    assert report.exit_code == 0, report.output


def test_a_one_character_secret_refuses_the_run_before_any_trial(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/short.eval.yaml", SHORT_SECRET_EVAL)
    result = invoke("eval", "evals", env={"TK": "x"})
    assert result.exit_code == 2, result.output
    assert "TK is 1 character long" in result.output
    assert "eval short" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "results/suite.json").exists()
    assert not (tmp_path / ".trialbook/runs").exists()


def test_a_short_secret_set_in_the_environment_fails_validate(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/short.eval.yaml", SHORT_SECRET_EVAL)
    assert invoke("validate", "evals", env={"TK": "abc"}).exit_code == 2
    assert invoke("validate", "evals", env={"TK": None}).exit_code == 0


def test_ansi_colour_and_nul_in_a_check_output_give_well_formed_junit(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/colour.eval.yaml",
        r"""
        prompt_text: |
          ```bash
          printf 'built\n'
          ```
        agents: [literal]
        assert:
          - succeeds: {command: "printf '\\033[31merror\\033[0m: bad\\000byte\\n'; exit 3"}
        """,
    )
    result = invoke("eval", "evals", "--junit", "junit.xml")
    assert result.exit_code == 1, result.output
    junit = (tmp_path / "junit.xml").read_text()
    root = ET.fromstring(junit.encode())
    failure = root.find("testcase/failure")
    assert failure is not None and failure.text is not None
    assert "\\x1b[31merror\\x1b[0m" in failure.text
    assert "\x1b" not in junit and "\x00" not in junit
