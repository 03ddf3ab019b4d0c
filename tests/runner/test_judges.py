"""Judged evals end to end: real ``trialbook eval`` runs whose judges are loopback chat servers.

Three judges: one follows the rubric (passes when the shown material holds the agreed marker), one always
passes, one answers garbage. Two script agents: ``good`` writes the explanation the rubric asks for,
``lazy`` does not. Each eval file puts a panel to one question: majority and unanimous verdicts, a
garbage judge alone (an error, never a pass), an always-pass judge failing its calibration examples
(``judge_uncalibrated``), and a secret in the file shown to the judges (the servers' request log is
scanned for it). Judge cost must show apart from agent cost in ``suite.json`` and the summary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trialbook.testing import ChatServer, Reply, text

from .conftest import refused_by_validate, write

MARKER = "EXPLAINED-THE-FAILURE"
PASS = '{"verdict": "pass", "reason": "the reply explains the failure"}'
FAIL = '{"verdict": "fail", "reason": "no explanation of the failure"}'
SECRET = "judge-leak-7f3a9c1e5b2d4f60"
RUBRIC = "The notes explain to the user why the build failed."


def _shown(body: dict[str, Any]) -> str:
    prompt = str(body["messages"][-1]["content"])
    return prompt.partition("What the agent produced:")[2].partition("Answer with exactly one JSON")[0]


def _follows(body: dict[str, Any]) -> Reply:
    return text(PASS if MARKER in _shown(body) else FAIL)


def _always(body: dict[str, Any]) -> Reply:
    return text(PASS)


def _garbage(body: dict[str, Any]) -> Reply:
    return text("Looks good to me! I would say it passes.")


@pytest.fixture
def servers() -> Iterator[dict[str, ChatServer]]:
    with ChatServer(_follows) as follows, ChatServer(_always) as always, ChatServer(_garbage) as garbage:
        yield {"follows": follows, "always": always, "garbage": garbage}


def _judge(server: ChatServer, model: str = "gpt-5") -> str:
    provider = {"type": "openai", "base_url": server.base_url, "api_key": "{{ secrets.JUDGE_KEY }}"}
    return json.dumps({"provider": provider, "model": model})


def _agents() -> str:
    good = f"printf 'the build failed: {MARKER}\\n' > NOTES.md; echo done"
    lazy = "printf 'all good\\n' > NOTES.md; echo done"
    return f"[{{name: good, script: {json.dumps(good)}}}, {{name: lazy, script: {json.dumps(lazy)}}}]"


def _eval(
    root: Path, name: str, judges: list[str], extra: str = "", show: str = "[{file: NOTES.md}]"
) -> None:
    write(
        root / f"evals/{name}.eval.yaml",
        f"""
prompt_text: fix the build and explain what failed
secrets: [JUDGE_KEY, LEAKED]
agents: {_agents()}
assert:
  - judge:
      rubric: {json.dumps(RUBRIC)}
      show: {show}
      judges: [{", ".join(judges)}]
{extra}""",
    )


def _run(root: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "JUDGE_KEY": "sk-judge-key-0123456789",
        "LEAKED": SECRET,
        "TRIALBOOK_HISTORY_DIR": str(root / "history"),
    }
    env.pop("CI", None)
    trialbook = str(Path(sys.executable).with_name("trialbook"))
    command = [
        trialbook,
        "eval",
        "evals",
        "--unsafe-local",
        "--results-dir",
        "results",
        "--summary",
        "summary.md",
    ]
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _tests(root: Path) -> dict[str, dict[str, Any]]:
    suite = json.loads((root / "results/suite.json").read_text())
    return {test["id"]: test for test in suite["tests"]}


def test_panels_decide_as_their_rules_say(tmp_path: Path, servers: dict[str, ChatServer]) -> None:
    follows, always, garbage = (_judge(servers[name]) for name in ("follows", "always", "garbage"))
    _eval(tmp_path, "majority", [follows, always, garbage])
    _eval(tmp_path, "unanimous", [follows, always], "      rule: unanimous\n")
    _eval(tmp_path, "garbage", [garbage])
    _eval(
        tmp_path, "calibrated", [always],
        f"      judge_examples:\n        - {{text: {json.dumps(MARKER)}, verdict: pass}}\n"
        "        - {text: 'all good', verdict: fail}\n",
    )  # fmt: skip
    _eval(
        tmp_path, "secret", [follows],
        show="[final_message, {file: NOTES.md}, {file: .env}, diff]",
    )  # fmt: skip
    secret_agent = f"printf 'TOKEN=%s\\n' \"$LEAKED\" > .env; printf '{MARKER}\\n' > NOTES.md; echo done"
    text_ = (tmp_path / "evals/secret.eval.yaml").read_text()
    (tmp_path / "evals/secret.eval.yaml").write_text(
        text_.replace(_agents(), f"[{{name: good, script: {json.dumps(secret_agent)}}}]")
    )
    done = _run(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    tests = _tests(tmp_path)
    verdicts = {test_id: test["properties"]["verdict"] for test_id, test in tests.items()}
    assert verdicts == {
        "majority::good": "pass",  # follows and always pass; garbage's error cannot stop a majority
        "majority::lazy": "fail",  # follows fails, always passes, garbage errs: no majority, never a pass
        "unanimous::good": "pass",
        "unanimous::lazy": "fail",
        "garbage::good": "fail",  # an unparsable answer is an error of that judge, never a pass
        "garbage::lazy": "fail",
        "calibrated::good": "judge_uncalibrated",
        "calibrated::lazy": "judge_uncalibrated",
        "secret::good": "pass",
    }
    garbage_record = tests["garbage::good"]["executions"][0]["assertions"][0]
    assert not garbage_record["passed"] and "not JSON" in garbage_record["error"]
    assert tests["calibrated::good"]["outcome"] == "error"
    # Judge cost apart from agent cost: script agents report none, the judges' tokens are priced.
    majority = tests["majority::good"]["properties"]
    assert majority["judge_cost_usd"] > 0 and majority["judge_calls"] == 3
    assert majority["cost_usd"] != majority["judge_cost_usd"]
    result = json.loads((tmp_path / "results/evals/majority/good/trial-1/result.json").read_text())
    calls = result["judge_calls"]
    assert [call["verdict"] for call in calls] == ["pass", "pass", None]
    assert calls[2]["error"] and calls[2]["answer"].startswith("Looks good")
    assert all(call["input_sha256"].startswith("sha256:") for call in calls)
    assert calls[0]["input_tokens"] == 100 and calls[0]["cost_usd"] > 0
    _costs_apart(tmp_path, done.stdout)
    # The secret the agent wrote into a shown file never reached any judge.
    sent = json.dumps([server.requests for server in servers.values()])
    assert MARKER in sent and SECRET not in sent and SECRET[:12] not in sent


def _costs_apart(root: Path, terminal: str) -> None:
    """The summary, the PR comment, the terminal table and the viewer show the judges' cost on its own."""
    from trialbook.evidence import load_suite
    from trialbook.github._state import _row, _row_json
    from trialbook.report.markdown import render_pr_comment
    from trialbook.report.suite_view import review_from_suite

    summary = (root / "summary.md").read_text()
    assert "⚖️ judge uncalibrated" in summary and "Judge cost: $0.0" in summary
    assert "| $0.00 + judges $0.0" in summary  # the script agents cost nothing; the judges do
    suite = load_suite(root / "results/suite.json")
    rows = [_row(json.loads(json.dumps(_row_json(row)))) for row in review_from_suite(suite).rows]
    comment = render_pr_comment(rows)
    assert "Judge cost: $0.0" in comment and "+ judges $0.0" in comment
    assert "+ judges $0.0" in terminal
    trialbook = str(Path(sys.executable).with_name("trialbook"))
    subprocess.run([trialbook, "report", "results", "--html", "page.html"], cwd=root, check=True, timeout=120)
    page = (root / "page.html").read_text()
    assert 'class="small judge-cost">judges: $0.0' in page


def test_bad_judge_fields_name_the_file_field_and_fix(tmp_path: Path) -> None:
    write(
        tmp_path / "evals/bad.eval.yaml",
        """
prompt_text: hi
agents: [literal]
assert:
  - judge: {rubric: x, show: [screenshot], judges: [{provider: openai, model: m}]}
  - judge: {show: [diff], judges: [{provider: openai, model: m}]}
  - judge: {rubric_file: missing.md, judges: [{provider: openai, model: m}]}
  - judge: {rubric: x, judges: []}
""",
    )
    out = refused_by_validate(tmp_path)
    assert "bad.eval.yaml:4: assert[0].judge.show[0]: unknown item 'screenshot' (use one of" in out
    assert "bad.eval.yaml:5: assert[1].judge.rubric: the rubric is missing (write the rubric inline" in out
    assert "bad.eval.yaml:6: assert[2].judge.rubric_file: the rubric file missing.md does not exist" in out
    assert "bad.eval.yaml:7: assert[3].judge.judges: the list is empty (name at least one judge" in out


def test_rescoring_asks_the_judges_again_and_reuses_answers_to_the_same_input(
    tmp_path: Path, servers: dict[str, ChatServer]
) -> None:
    starts = tmp_path / "starts.log"
    agent = f"printf 'the build failed: {MARKER}\\n' > NOTES.md; echo good >> {starts}"
    follows = servers["follows"]

    def eval_file(rubric: str, check: str) -> None:
        write(
            tmp_path / "evals/work.eval.yaml",
            f"""
prompt_text: fix the build and explain what failed
secrets: [JUDGE_KEY]
trials: 2
agents: [{{name: good, script: {json.dumps(agent)}}}]
assert:
  - {check}
  - judge: {{rubric: {json.dumps(rubric)}, show: [{{file: NOTES.md}}], judges: [{_judge(follows)}]}}
""",
        )

    eval_file(RUBRIC, "file_exists: NOTES.md")
    first = _run(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    asked = len(follows.requests)
    assert asked == 1  # two trials, one input: the second answer came from the run's cache
    # Only an assertion changed: re-scored, no agent started, and the judge's recorded answer is reused.
    eval_file(RUBRIC, 'file_contains: {path: NOTES.md, pattern: "build"}')
    second = _run(tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "rescored" in second.stdout + second.stderr
    assert len(follows.requests) == asked
    assert starts.read_text().count("good") == 2
    calls = json.loads((tmp_path / "results/evals/work/good/trial-1/result.json").read_text())["judge_calls"]
    assert [call["cached"] for call in calls] == [True]
    # The rubric changed: the judges are asked again over the recorded trials, still no agent started.
    eval_file(RUBRIC + " It names the failing step.", 'file_contains: {path: NOTES.md, pattern: "build"}')
    third = _run(tmp_path)
    assert third.returncode == 0, third.stdout + third.stderr
    assert len(follows.requests) == asked + 1
    assert starts.read_text().count("good") == 2
    props = _tests(tmp_path)["work::good"]["properties"]
    assert props["rescored_from"] and props["judge_cost_usd"] > 0
