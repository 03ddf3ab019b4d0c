"""Trigger evals through the command line: loading and its errors, caching per query, unknown kept apart."""

from __future__ import annotations

import json
from pathlib import Path

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]

SKILL = "---\nname: deploy\ndescription: Deploys the app with acme.\n---\nRun acme deploy.\n"
HEAD = """\
skills: [../skills/deploy]
agents: [{name: fixed, script: "cat .agents/skills/deploy/SKILL.md"}]
trials: 2
"""


def _repo(root: Path, triggers: str, head: str = HEAD) -> None:
    write(root / "skills/deploy/SKILL.md", SKILL)
    write(root / "evals/deploy.eval.yaml", head + triggers)


def _problems(output: str) -> list[str]:
    return [
        line.removeprefix("error: ") for line in output.splitlines() if ".yaml:" in line or ".jsonl:" in line
    ]


def test_each_query_runs_as_its_own_eval_and_a_fixed_script_counts_as_unknown(
    invoke: Invoke, tmp_path: Path
) -> None:
    _repo(
        tmp_path,
        "triggers:\n  skill: deploy\n  min_recall: 0.5\n  queries:\n"
        "    - {query: Ship it, expect: should, id: ship}\n"
        "    - {query: Run the tests, expect: should_not, split: holdout}\n",
    )
    result = invoke("eval", "evals")
    # The script reads SKILL.md whatever it is asked: no model chose, so nothing is decided either way.
    assert result.exit_code == 1, result.output
    assert "deploy/ship" in result.output
    assert "4 unknown · error" in result.output
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    [group] = manifest["triggers"]
    assert group["score"]["confusion"] == {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    assert group["score"]["recall"]["value"] is None  # unknown, never 0
    first = group["queries"][0]
    assert (first["id"], first["unknown"], first["rate"]) == ("ship", 2, None)
    assert group["holdout"]["unknown"] == 2
    extras = [line["extra"]["trigger"] for line in manifest["history_lines"]]
    assert {(e["query"], e["unknown"]) for e in extras} >= {("ship", 2)}


def test_an_unchanged_query_is_served_from_history_and_an_added_one_runs_alone(
    invoke: Invoke, tmp_path: Path
) -> None:
    queries = "triggers:\n  skill: deploy\n  queries:\n    - {query: Ship it, expect: should, id: ship}\n"
    _repo(tmp_path, queries)
    first = invoke("eval", "evals", "--history-dir", "history")
    assert "deploy/ship" in first.output
    _repo(tmp_path, queries + "    - {query: Run the tests, expect: should_not, id: tests}\n")
    second = invoke("eval", "evals", "--history-dir", "history", "--dry-run")
    plan = {line.split()[1]: line.split()[0] for line in second.output.splitlines() if " deploy/" in line}
    assert plan == {"deploy/ship": "cached", "deploy/tests": "run"}, second.output
    third = invoke("eval", "evals", "--history-dir", "history")
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    [group] = manifest["triggers"]
    # The cached query still counts, from the counts its history line kept.
    assert {q["id"]: q["unknown"] for q in group["queries"]} == {"ship": 2, "tests": 2}, third.output
    assert [p["action"] for p in manifest["pairs"]] == ["cached", "run"]


def test_every_mistake_in_a_trigger_eval_is_named_with_its_line(invoke: Invoke, tmp_path: Path) -> None:
    _repo(
        tmp_path,
        "prompt_text: hello\n"
        "triggers:\n"
        "  skill: deploi\n"
        "  min_recall: 1.5\n"
        "  queries:\n"
        "    - {query: Ship it, expect: maybe}\n"
        "    - {query: 'Use {{ x }}', expect: should}\n",
    )
    result = invoke("validate", "evals")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    problems = _problems(result.output)
    assert any(":4: prompt_text: cannot be used with triggers" in p for p in problems), problems
    assert any(":7: triggers.min_recall: 1.5 is out of range" in p for p in problems), problems


def test_query_mistakes_point_into_the_eval_file_and_the_skill_must_be_declared(
    invoke: Invoke, tmp_path: Path
) -> None:
    _repo(
        tmp_path,
        "triggers:\n"
        "  skill: deploi\n"
        "  queries:\n"
        "    - {query: Ship it, expect: maybe}\n"
        "    - {query: 'Use {{ x }}', expect: should}\n"
        "    - {query: Ship it, expect: should}\n"
        "    - {expect: should}\n",
    )
    result = invoke("validate", "evals")
    assert result.exit_code == 2
    problems = _problems(result.output)
    expected = [
        ":7: triggers.queries[0].expect: 'maybe' is no label",
        ":8: triggers.queries[1].query: holds a {{ placeholder",
        ":10: triggers.queries[3].query: is missing",
        ":5: triggers.skill: 'deploi' is no declared skill",
    ]
    for where in expected:
        assert any(where in p for p in problems), (where, problems)


def test_a_duplicate_query_is_refused(invoke: Invoke, tmp_path: Path) -> None:
    _repo(
        tmp_path,
        "triggers:\n  skill: deploy\n  queries:\n"
        "    - {query: Ship it, expect: should}\n    - {query: Ship it, expect: should_not}\n",
    )
    result = invoke("validate", "evals")
    assert result.exit_code == 2
    assert any(
        ":8: triggers.queries[1]: the same text as triggers.queries[0]" in p for p in _problems(result.output)
    ), result.output


def test_a_shared_query_file_in_yaml_or_jsonl_loads_and_its_mistakes_name_that_file(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(
        tmp_path / "evals/queries.jsonl",
        '{"query": "Ship it", "expect": "should"}\n\n{"query": "x", "expect": "no"}\n',
    )
    _repo(tmp_path, "triggers:\n  skill: deploy\n  queries: queries.jsonl\n")
    result = invoke("validate", "evals")
    assert result.exit_code == 2
    assert any("queries.jsonl:3: queries[1].expect: 'no' is no label" in p for p in _problems(result.output))
    write(tmp_path / "evals/queries.jsonl", '{"query": "Ship it", "expect": "should"}\n')
    write(tmp_path / "evals/more.yaml", "- {query: Run the tests, expect: should_not}\n")
    assert invoke("validate", "evals").exit_code == 0
    _repo(tmp_path, "triggers:\n  skill: deploy\n  queries: more.yaml\n")
    assert "ok: 1 eval(s)" in invoke("validate", "evals").output
    _repo(tmp_path, "triggers:\n  skill: deploy\n  queries: nowhere.yaml\n")
    missing = invoke("validate", "evals")
    assert missing.exit_code == 2 and "the query file nowhere.yaml does not exist" in missing.output


def test_a_deeply_nested_query_file_is_refused_not_a_crash(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "evals/deep.yaml", "[" * 10_000 + "]" * 10_000 + "\n")
    _repo(tmp_path, "triggers:\n  skill: deploy\n  queries: deep.yaml\n")
    result = invoke("validate", "evals")
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    assert "deep.yaml:1" in result.output


def test_the_example_trigger_eval_is_valid_and_asks_every_query(invoke: Invoke) -> None:
    from ..runner.conftest import EXAMPLES

    result = invoke("validate", str(EXAMPLES / "triggers"))
    assert result.exit_code == 0, result.output
    assert "ok: 8 eval(s) in 1 file(s)" in result.output
