"""Failing prompts, timeouts, secrets and concurrent call logs, through the real CLI and sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.deadlines import growing
from tests.sandbox.procs import wait_gone
from trialbook.evidence import load_suite
from trialbook.report.viewer_load import load_run

from .conftest import Invoke, write


def test_failing_steps_give_verdict_fail_exit_1_and_messages(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/broken-guide.eval.yaml",
        """
        prompt_text: |
          ```bash
          vendor setup
          false
          vendor deploy
          ```
        agents: [literal]
        shims:
          vendor: {script: 'echo "vendor $1"'}
        assert:
          - ran: vendor deploy
          - file_exists: deployed.txt
        """,
    )
    result = invoke("eval", "evals", "--summary", "summary.md")
    assert result.exit_code == 1, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.outcome == "failed"
    assert any("ran vendor deploy" in error or "vendor deploy" in error for error in test.assertion_errors)
    summary = (tmp_path / "summary.md").read_text()
    assert "broken-guide" in summary
    assert "fail" in summary.lower()
    assert "### What failed" in summary
    assert 'trial 1: ran "vendor deploy": no call matched' in summary
    assert 'trial 1: file_exists "deployed.txt"' in summary
    assert "trial 1: the agent's last message: " in summary
    calls = (tmp_path / ".trialbook/runs/latest/evals/broken-guide/literal/trial-1/calls.jsonl").read_text()
    assert [json.loads(line)["argv"] for line in calls.splitlines()] == [["vendor", "setup"]]


def test_timeout_kills_the_trial_and_its_children(invoke: Invoke, tmp_path: Path) -> None:
    pid_file = tmp_path / "pids.txt"
    for timeout in growing(2):  # until both children started before the timeout (see tests.deadlines)
        pid_file.unlink(missing_ok=True)
        write(
            tmp_path / "evals/slow.eval.yaml",
            f"""
            prompt_text: |
              ```bash
              (sleep 300 & echo $! >> {pid_file}; wait) &
              sleep 300 & echo $! >> {pid_file}
              until [ "$(wc -l < {pid_file})" -ge 2 ]; do sleep 0.01; done
              touch {pid_file}.ready
              sleep 300
              ```
            agents: [literal]
            timeout: {timeout:g}s
            assert:
              - file_exists: never.txt
            """,
        )
        result = invoke("eval", "evals")
        assert result.exit_code == 1, result.output
        if Path(f"{pid_file}.ready").exists():
            break
    else:
        pytest.fail("the children never started")
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    execution = suite.tests[0].executions[0]
    assert execution.result.stop_reason == "timeout"
    assert execution.passed is False
    pids = [int(line) for line in pid_file.read_text().split()]
    assert len(pids) == 2
    assert wait_gone(pids) == []


def test_secret_values_never_reach_results_or_terminal(invoke: Invoke, tmp_path: Path) -> None:
    secret = "s3cr3t-Value-9f8e7d"
    write(
        tmp_path / "evals/secret.eval.yaml",
        """
        prompt_text: |
          Log in with the token {{ secrets.VENDOR_TOKEN }}:
          ```bash
          vendor login --token {{ secrets.VENDOR_TOKEN }}
          echo "token is {{ secrets.VENDOR_TOKEN }}"
          echo "{{ secrets.VENDOR_TOKEN }}" > token.txt
          ```
        secrets: [VENDOR_TOKEN]
        agents: [literal]
        shims:
          vendor: {script: 'echo "logged in with $3"'}
        assert:
          - ran: vendor login
          - file_contains: {path: token.txt, pattern: "not-the-token"}
        """,
    )
    result = invoke(
        "eval", "evals", "--summary", "summary.md", "--junit", "junit.xml", env={"VENDOR_TOKEN": secret}
    )
    assert result.exit_code == 1, result.output
    assert secret not in result.output
    written = [
        p for p in tmp_path.rglob("*") if p.is_file() and "evals" not in p.relative_to(tmp_path).parts[:1]
    ]
    assert any(p.name == "calls.jsonl" for p in written)
    for path in written:
        assert secret.encode() not in path.read_bytes(), path
    # The agent's calls, not the negative control's (which ran nothing).
    calls = next(p for p in written if p.name == "calls.jsonl" and "controls" not in p.parts).read_text()
    assert "***" in calls


def test_unset_secret_is_refused_before_any_trial(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/needs-secret.eval.yaml",
        """
        prompt_text: "use {{ secrets.MISSING_TOKEN }}"
        secrets: [MISSING_TOKEN]
        agents: [literal]
        """,
    )
    result = invoke("eval", "evals", env={"MISSING_TOKEN": None})
    assert result.exit_code == 2
    assert "MISSING_TOKEN" in result.output
    assert not (tmp_path / ".trialbook/runs/latest/suite.json").exists()


def test_concurrent_evals_keep_separate_complete_call_logs(invoke: Invoke, tmp_path: Path) -> None:
    for name in ("alpha", "beta", "gamma"):
        write(
            tmp_path / f"evals/{name}.eval.yaml",
            f"""
            prompt_text: |
              ```bash
              for i in $(seq 1 40); do tool {name} "$i" & done; wait
              ```
            agents: [literal]
            trials: 2
            shims:
              tool: {{script: 'echo "$@"'}}
            assert:
              - ran: tool {name} 40
            """,
        )
    result = invoke("eval", "evals", "--concurrency", "6")
    assert result.exit_code == 0, result.output
    for name in ("alpha", "beta", "gamma"):
        for trial in (1, 2):
            log = tmp_path / f".trialbook/runs/latest/evals/{name}/literal/trial-{trial}/calls.jsonl"
            calls = [json.loads(line) for line in log.read_text().splitlines()]
            assert len(calls) == 40
            assert {c["argv"][1] for c in calls} == {name}
            assert sorted(int(c["argv"][2]) for c in calls) == list(range(1, 41))


def test_a_call_log_is_kept_only_where_shims_watched_the_agent(invoke: Invoke, tmp_path: Path) -> None:
    """No shims, no log: an empty ``calls.jsonl`` would say the agent called nothing, unwatched."""
    bare_eval = "prompt_text: hi\nagents: [{name: s, script: 'tool x || true'}]\n"
    write(tmp_path / "evals/bare.eval.yaml", bare_eval)
    write(
        tmp_path / "evals/watched.eval.yaml",
        """
        prompt_text: hi
        agents: [{name: s, script: 'true'}]
        shims:
          tool: {script: 'echo "$@"'}
        """,
    )
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    run = tmp_path / ".trialbook/runs/latest"
    bare, watched = run / "evals/bare/s/trial-1", run / "evals/watched/s/trial-1"
    assert (bare / "result.json").is_file() and (bare / "changes.json").is_file()
    assert not (bare / "calls.jsonl").exists()
    assert (watched / "calls.jsonl").read_bytes() == b""
    loaded = load_run(run / "suite.json")
    assert loaded.trials[("bare::s", 1)].calls == ()
    assert loaded.trials[("bare::s", 1)].call_log_problems == ()


def test_keep_sandboxes_leaves_each_trial_folder_and_names_it(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/keep.eval.yaml",
        """
        prompt_text: |
          ```bash
          echo kept > kept.txt
          ```
        agents: [literal]
        assert:
          - file_exists: kept.txt
        """,
    )
    result = invoke("eval", "evals", "--keep-sandboxes")
    assert result.exit_code == 0, result.output
    listed = result.output.split("kept sandboxes:")[1].split("results:")[0].split()
    assert len(listed) == 1
    assert (Path(listed[0]) / "work/kept.txt").read_text() == "kept\n"
    plain = invoke("eval", "evals")
    assert "kept sandboxes" not in plain.output


def _costly_evals(root: Path, cost: str) -> None:
    for name in ("one", "two"):
        write(
            root / f"evals/{name}.eval.yaml",
            f"""
            prompt_text: do it
            agents: [{{name: paid, script: "touch done.txt", cost_usd: {cost}}}]
            trials: 3
            assert:
              - file_exists: done.txt
            """,
        )


def test_budget_stops_starting_trials_and_exits_3(invoke: Invoke, tmp_path: Path) -> None:
    _costly_evals(tmp_path, "0.5")
    result = invoke("eval", "evals", "--budget-usd", "1.2", "--concurrency", "1", "--summary", "summary.md")
    assert result.exit_code == 3, result.output
    # $0.5 each: the third trial starts at $1.0, then the budget is spent
    assert sum(1 for line in result.output.splitlines() if line.startswith("[") and " trial " in line) == 3
    assert "3 trials not started" in result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert sorted(test.outcome for test in suite.tests) == ["incomplete", "incomplete"]
    assert sum(len(test.executions) for test in suite.tests) == 3
    assert "not started" in (tmp_path / "summary.md").read_text()


def test_unknown_cost_is_named_not_counted_as_free(invoke: Invoke, tmp_path: Path) -> None:
    _costly_evals(tmp_path, "null")
    result = invoke("eval", "evals", "--budget-usd", "0.01")
    assert result.exit_code == 0, result.output
    assert "cost unknown for 6 trials, not counted as free" in result.output
    assert "unknown" in result.output.split("eval ")[1]


def test_a_torn_call_log_line_makes_the_evidence_incomplete(invoke: Invoke, tmp_path: Path) -> None:
    write(
        tmp_path / "evals/torn.eval.yaml",
        """
        prompt_text: |
          ```bash
          tool first
          printf '{"argv": ["tool", "sec' >> "$(dirname "$(dirname "$(command -v tool)")")/calls.jsonl"
          ```
        agents: [literal]
        shims:
          tool: {script: "true"}
        assert:
          - ran: tool first
        """,
    )
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    execution = load_suite(tmp_path / ".trialbook/runs/latest/suite.json").tests[0].executions[0]
    assert execution.result.evidence_complete is False
    assert any(error.startswith("call log: ") for error in execution.result.capture_errors)


def test_a_python_script_agent_can_be_named_in_yaml(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        tmp_path / "agents_pkg/fake_agent.py",
        """
        from pathlib import Path


        def work(task):
            (Path(task.workdir) / "done.txt").write_text("done\\n")
            return "did it"
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path / "agents_pkg"))
    write(
        tmp_path / "evals/py.eval.yaml",
        """
        prompt_text: do it
        agents: [{name: pyfake, python: "fake_agent:work"}]
        assert:
          - file_exists: done.txt
        """,
    )
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert suite.tests[0].executions[0].result.final_response == "did it"


def test_an_unwritable_results_folder_is_a_clear_error_not_a_traceback(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "evals/one.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    (tmp_path / "blocked").write_text("a file where the results folder should go\n")
    result = invoke("eval", "evals", "--results-dir", "blocked/results")
    assert result.exit_code == 2  # before any trial: bad input, not a failed run
    assert f"--results-dir {tmp_path}/blocked/results: {tmp_path}/blocked is not a folder" in result.output
    assert "Traceback" not in result.output
