"""The negative control end to end: a vacuous eval fails the run, the opt-out passes, both are cached."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Invoke, write


def _eval(root: Path, *, opt_out: bool = False) -> None:
    write(
        root / "evals/quiet.eval.yaml",
        f"""
        prompt_text: tidy up, but never run foo
        agents: [literal]
        shims: {{foo: stub}}
        {"negative_control: false" if opt_out else ""}
        assert:
          - not_ran: foo
        """,
    )


def _row(output: str, eval_id: str) -> str:
    return next(line for line in output.splitlines() if line.startswith(f"{eval_id}  "))


def test_an_eval_that_passes_with_no_agent_is_vacuous_and_fails_the_run(
    invoke: Invoke, tmp_path: Path
) -> None:
    _eval(tmp_path)
    dry = invoke("eval", "evals", "--dry-run", "--history-dir", "history")
    assert "1 negative control trial (the noop agent" in dry.output
    result = invoke("eval", "evals", "--history-dir", "history", "--summary", "summary.md")
    assert result.exit_code == 1, result.output
    row = _row(result.output, "quiet")
    assert " vacuous " in row
    assert 'vacuous: passes with no agent (not_ran "foo" held on an untouched sandbox)' in row
    summary = (tmp_path / "summary.md").read_text()
    assert "🕳️ vacuous" in summary and "1 vacuous" in summary
    assert 'negative control: with no agent at all, this assertion held: not_ran "foo"' in summary
    control = tmp_path / ".trialbook/runs/latest/controls/quiet/trial-1/result.json"
    assert json.loads(control.read_text())["result"]["agent_name"] == "noop"
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    (test,) = suite["tests"]
    assert test["outcome"] == "failed"
    assert test["properties"]["negative_control"] == "vacuous"
    assert test["properties"]["vacuous_held"] == ['not_ran "foo"']
    (line,) = [json.loads(text) for text in (tmp_path / "history/quiet.jsonl").read_text().splitlines()]
    assert line["verdict"] == "fail"
    assert line["extra"]["vacuous"] is True
    assert line["extra"]["control_key"].startswith("sha256:")

    again = invoke("eval", "evals", "--history-dir", "history")
    assert again.exit_code == 1, again.output
    assert " trial " not in again.output  # cached: no trial started, the control included
    assert "cached (vacuous)" in again.output
    assert not (tmp_path / ".trialbook/runs/latest/evals").exists()
    assert not (tmp_path / ".trialbook/runs/latest/controls").exists()


def test_the_opt_out_key_makes_it_pass(invoke: Invoke, tmp_path: Path) -> None:
    _eval(tmp_path, opt_out=True)
    result = invoke("eval", "evals", "--history-dir", "history")
    assert result.exit_code == 0, result.output
    assert " pass " in _row(result.output, "quiet")
    assert not (tmp_path / ".trialbook/runs/latest/controls/quiet").exists()


def test_the_control_runs_once_per_cache_key(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/prompts/make.md", "Make it:\n```bash\ntouch made.txt\n```\n")
    write(
        tmp_path / "evals/make.eval.yaml",
        """
        prompt: prompts/make.md
        agents: [literal, {name: fake, script: "touch made.txt"}]
        assert:
          - file_exists: made.txt
        """,
    )
    first = invoke("eval", "evals", "--history-dir", "history")
    assert first.exit_code == 0, first.output
    assert (tmp_path / ".trialbook/runs/latest/controls/make/trial-1").is_dir()
    lines = [json.loads(t) for t in (tmp_path / "history/make.jsonl").read_text().splitlines()]
    assert {line["extra"]["vacuous"] for line in lines} == {False}
    assert len({line["extra"]["control_key"] for line in lines}) == 1
    # Only one agent's cache key moves: it runs again, the control (same key) does not.
    path = tmp_path / "evals/make.eval.yaml"
    path.write_text(path.read_text().replace('"touch made.txt"', '"touch made.txt; true"'))
    second = invoke("eval", "evals", "--history-dir", "history")
    assert second.exit_code == 0, second.output
    assert "make [fake] trial 1: pass" in second.output
    assert not (tmp_path / ".trialbook/runs/latest/controls/make").exists()


def test_noop_is_a_registered_agent(invoke: Invoke, tmp_path: Path) -> None:
    listed = invoke("agents")
    assert any(line.startswith("noop") and "available" in line for line in listed.output.splitlines())
