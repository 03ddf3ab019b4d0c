"""validate, init, list, report, agents and schema through the real command line."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from ..runner.conftest import EXAMPLES, Invoke, invoke, write

__all__ = ["invoke"]


def test_validate_reports_every_broken_file_and_field_without_a_traceback(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "evals/typo.eval.yaml", "prompt_text: hi\nagents: [literal]\ntrails: 3\n")
    write(tmp_path / "evals/bad-agent.eval.yaml", "prompt_text: hi\nagents: [gpt-cli]\n")
    write(
        tmp_path / "evals/bad-regex.eval.yaml",
        "prompt_text: hi\nagents: [literal]\nassert:\n  - ran: '/neon (init/'\n",
    )
    write(tmp_path / "evals/missing-prompt.eval.yaml", "prompt: nowhere.md\nagents: [literal]\n")
    write(tmp_path / "evals/secret.eval.yaml", "prompt_text: 'use {{ secrets.KEY }}'\nagents: [literal]\n")
    write(tmp_path / "evals/fine.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    result = invoke("validate", "evals")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    expectations = {
        "typo.eval.yaml:3": "trails",
        "bad-agent.eval.yaml:2": "gpt-cli",
        "bad-regex.eval.yaml:4": "ran",
        "missing-prompt.eval.yaml:1": "nowhere.md",
        "secret.eval.yaml:1": "KEY",
    }
    for where, field in expectations.items():
        lines = [line for line in result.output.splitlines() if where in line]
        assert lines, f"no problem reported at {where}:\n{result.output}"
        assert any(field in line for line in lines), lines
    assert "fine.eval.yaml" not in result.output


def test_validate_accepts_the_examples(invoke: Invoke) -> None:
    result = invoke("validate", str(EXAMPLES / "evals"))
    assert result.exit_code == 0, result.output
    assert "ok: 3 eval(s) in 3 file(s)" in result.output


def test_init_scaffolds_an_eval_that_passes(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("init")
    assert result.exit_code == 0, result.output
    eval_file = tmp_path / "evals/hello.eval.yaml"
    assert eval_file.read_text().startswith("# yaml-language-server: $schema=./trialbook.schema.json")
    schema = json.loads((tmp_path / "evals/trialbook.schema.json").read_text())
    jsonschema.validate(yaml.safe_load(eval_file.read_text()), schema)
    run = invoke("eval")
    assert run.exit_code == 0, run.output
    again = invoke("init")
    assert again.exit_code == 2
    assert "--force" in again.output


def test_list_says_why_each_eval_would_run(invoke: Invoke) -> None:
    result = invoke("list", str(EXAMPLES / "evals"), "--filter", "dep*", env={"CI": None})
    assert result.exit_code == 0, result.output
    assert "run       deploy [literal] — no earlier run in history" in result.output
    assert "filtered  quick-init [literal] — id does not match dep*" in result.output


def test_shards_split_the_plan_exactly_once(invoke: Invoke) -> None:
    seen: list[str] = []
    for index in (1, 2):
        result = invoke("list", str(EXAMPLES / "evals"), "--shard", f"{index}/2")
        assert result.exit_code == 0, result.output
        seen += [line.split()[1] for line in result.output.splitlines() if line.startswith("run ")]
    assert sorted(seen) == ["config-check", "deploy", "quick-init"]
    bad = invoke("list", str(EXAMPLES / "evals"), "--shard", "3/2")
    assert bad.exit_code == 2
    assert "I must be between 1 and N" in bad.output


def test_report_renders_a_saved_suite(invoke: Invoke, tmp_path: Path) -> None:
    assert invoke("eval", str(EXAMPLES / "evals" / "quick-init.eval.yaml")).exit_code == 0
    suite = ".trialbook/runs/latest/suite.json"
    markdown = invoke("report", suite)
    assert markdown.exit_code == 0, markdown.output
    assert "quick-init" in markdown.output
    junit = invoke("report", suite, "--format", "junit")
    assert junit.exit_code == 0
    assert '<testcase classname="literal" name="quick-init"' in junit.output
    (tmp_path / "old.json").write_text(json.dumps({"schema_version": "3.0"}))
    old = invoke("report", "old.json")
    assert old.exit_code == 2
    assert "3.0" in old.output
    assert "Traceback" not in old.output


def test_agents_lists_literal_as_available(invoke: Invoke) -> None:
    result = invoke("agents")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("literal"))
    assert "available" in line
    assert {"copilot", "claude-code", "codex"} <= {line.split()[0] for line in result.output.splitlines()}


def test_schema_prints_the_eval_file_schema(invoke: Invoke) -> None:
    result = invoke("schema")
    assert result.exit_code == 0
    schema = json.loads(result.output)
    assert "prompt" in schema["properties"]
    assert "assert" in schema["properties"]


def test_environment_variables_set_options(invoke: Invoke) -> None:
    result = invoke(
        "eval", str(EXAMPLES / "evals"), env={"TRIALBOOK_DRY_RUN": "1", "TRIALBOOK_FILTER": "quick*"}
    )
    assert result.exit_code == 0, result.output
    assert "1 eval × agent pair to run (1 trial)" in result.output
