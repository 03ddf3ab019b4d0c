"""Failure lines that explain: the failing step's output, a script agent's stderr and the calls' exit codes
reach the terminal, the job summary and JUnit, masked and bounded; a ran_in_order failure fits one line."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Invoke, write

SECRET = "tok-ZQ81-very-secret-value"


def _run(invoke: Invoke, tmp_path: Path, body: str, *extra: str) -> tuple[str, str, str]:
    write(tmp_path / "evals/guide.eval.yaml", body)
    result = invoke(
        "eval",
        "evals",
        "--summary",
        "summary.md",
        "--junit",
        "junit.xml",
        *extra,
        env={"VENDOR_TOKEN": SECRET},
    )
    assert result.exit_code == 1, result.output
    return result.output, (tmp_path / "summary.md").read_text(), (tmp_path / "junit.xml").read_text()


def test_a_failing_literal_step_shows_the_end_of_its_output_everywhere(
    invoke: Invoke, tmp_path: Path
) -> None:
    terminal, summary, junit = _run(
        invoke,
        tmp_path,
        """
        prompt_text: |
          Install the tool:
          ```bash
          vendor init
          echo "using token $VENDOR_TOKEN"
          python3 -m no_such_module_xyz
          vendor deploy
          ```
        secrets: [VENDOR_TOKEN]
        agents:
          - name: literal
            env: {VENDOR_TOKEN: "{{ secrets.VENDOR_TOKEN }}"}
        shims:
          vendor: {script: 'echo "vendor $1"; [ "$1" = init ] && exit 0; exit 0'}
        assert:
          - ran: vendor deploy
        """,
    )
    for text in (terminal, summary, junit):
        assert "No module named no_such_module_xyz" in text
        assert "vendor init (exit 0)" in text  # calls seen carry exit codes
        assert SECRET not in text and "using token ***" in text
    (line,) = [
        line for line in terminal.splitlines() if line.startswith("[1/1] guide [literal] trial 1: FAIL")
    ]
    # Two checks failed: the line says so, and each has a line of its own below it, the guide's first.
    assert line.endswith("— 2 checks failed")
    after = terminal.splitlines()[terminal.splitlines().index(line) + 1 :]
    assert after[0] == "    guide steps: step 1 of 1 (line 2) failed with exit code 1"
    assert after[1] == '    ran "vendor deploy": no call matched'
    assert after[2].startswith("    Step 1 of 1 (line 2) failed with exit code 1")


def test_a_script_agents_stderr_and_exit_code_are_shown(invoke: Invoke, tmp_path: Path) -> None:
    terminal, summary, junit = _run(
        invoke,
        tmp_path,
        """
        prompt_text: deploy it
        agents:
          - name: fake
            script: |
              vendor login
              echo "fatal: could not reach the API" >&2
              exit 3
        shims:
          vendor: {script: 'exit 5'}
        assert:
          - file_exists: deployed.txt
        """,
    )
    for text in (terminal, summary, junit):
        assert "fatal: could not reach the API" in text
        assert "the script exited with code 3" in text
        assert "vendor login (exit 5)" in text
    assert "<error message=" in junit


def test_a_ran_in_order_failure_is_one_line_within_160_columns(invoke: Invoke, tmp_path: Path) -> None:
    terminal, summary, _ = _run(
        invoke,
        tmp_path,
        """
        prompt_text: |
          ```bash
          vendor setup --project demo-project-with-a-long-name
          vendor init --region europe-west-and-then-some
          vendor deploy --staging
          ```
        agents: [literal]
        shims:
          vendor: {script: 'true'}
        assert:
          - ran_in_order:
              - vendor setup --project demo-project-with-a-long-name
              - vendor init --region europe-west-and-then-some
              - "/vendor deploy --prod .*/"
              - vendor verify --all-regions --strict
        """,
    )
    (line,) = [line for line in terminal.splitlines() if " trial 1: FAIL" in line]
    assert len(line) <= 160, line
    assert 'ran_in_order: "/vendor deploy --prod .*/" was not found after call 2' in line
    assert line.count("vendor verify") == 0  # the pattern list is not repeated on the line
    assert "ran_in_order:" in summary and "3. vendor deploy --staging (exit 0)" in summary


def test_huge_output_is_bounded_and_masked_before_it_is_cut(invoke: Invoke, tmp_path: Path) -> None:
    terminal, summary, junit = _run(
        invoke,
        tmp_path,
        """
        prompt_text: |
          ```bash
          for i in $(seq 1 20000); do echo "noise line $i"; done
          printf '%0290d%s tail\\n' 0 "$VENDOR_TOKEN"
          false
          ```
        secrets: [VENDOR_TOKEN]
        agents:
          - name: literal
            env: {VENDOR_TOKEN: "{{ secrets.VENDOR_TOKEN }}"}
        assert:
          - file_exists: done.txt
        """,
    )
    for text in (terminal, summary, junit):
        assert "noise line 20000" in text
        assert "noise line 19000" not in text
        for start in range(len(SECRET) - 5):
            assert SECRET[start : start + 6] not in text
    assert len(summary) < 20_000 and len(junit) < 20_000
    assert all(len(line) <= 160 for line in terminal.splitlines() if "noise" in line or "***" in line)


GUIDE = """# Set up acme

```bash
acme init
```

Build it:

```bash
acme build
```
"""

BROKEN_GUIDE_EVAL = """
prompt: guide.md
agents: [literal]
negative_control: false
shims:
  acme: {script: '[ "$1" = build ] && exit 3; touch acme.toml'}
assert:
  - ran_in_order: [acme init, acme build]
  - succeeds: test -f acme.toml
"""


def test_a_guide_whose_last_step_fails_fails_its_trial_and_says_which_step(
    invoke: Invoke, tmp_path: Path
) -> None:
    # Every assertion holds (both commands ran, the file exists); the guide's own step still failed.
    write(tmp_path / "evals/guide.md", GUIDE)
    terminal, summary, junit = _run(invoke, tmp_path, BROKEN_GUIDE_EVAL)
    expected = "step 2 of 2 (line 9) failed with exit code 3"
    (line,) = [line for line in terminal.splitlines() if line.startswith("[1/1] guide [literal] trial 1:")]
    assert "FAIL" in line and f"guide steps: {expected}" in line, terminal
    assert expected in summary and expected in junit
    result = json.loads(
        next(
            (tmp_path / ".trialbook/runs/latest").glob("evals/guide/literal/trial-1/result.json")
        ).read_text()
    )
    (check,) = [c for c in result["assertions"] if c["kind"] == "guide_steps"]
    assert (check["passed"], check["actual"]) == (False, expected)
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    assert [t["outcome"] for t in suite["tests"]] == ["failed"]
    assert invoke("report", "--html", "report.html").exit_code == 0
    assert expected in (tmp_path / "report.html").read_text()  # the viewer's trial page lists the check


def test_a_step_the_guide_marks_may_fail_does_not_fail_the_trial(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/guide.md",
        GUIDE.replace("Build it:\n", "Build it:\n\n<!-- trialbook: may-fail -->\n"),
    )
    write(tmp_path / "evals/guide.eval.yaml", BROKEN_GUIDE_EVAL)
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    assert "guide steps" not in result.output
    log = next(
        (tmp_path / ".trialbook/runs/latest").glob("evals/guide/literal/trial-1/literal.log")
    ).read_text()
    assert "Failed as the guide allows (may-fail): step 2." in log
