"""``--json`` outputs validate against the JSON Schemas committed in docs/schemas/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ..runner.conftest import EXAMPLES, Invoke, invoke, write

__all__ = ["invoke"]

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def _valid(kind: str, text: str) -> Any:
    document = json.loads(text)
    schema = json.loads((SCHEMAS / f"{kind}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)
    assert document["kind"] == kind
    return document


def _evals(tmp_path: Path) -> None:
    write(tmp_path / "evals/good.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    write(
        tmp_path / "evals/bad.eval.yaml",
        "prompt_text: hi\nagents: [literal, {name: s, script: 'echo oops; exit 3'}]\n"
        "assert:\n  - file_exists: nowhere.txt\n",
    )


def test_list_json(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    result = invoke("list", "--json", "--filter", "good")
    assert result.exit_code == 0, result.output
    document = _valid("list", result.stdout)
    assert [(p["id"], p["agent"], p["action"]) for p in document["pairs"]] == [
        ("bad", "literal", "filtered"),
        ("bad", "s", "filtered"),
        ("good", "literal", "run"),
    ]
    assert document["to_run"] == 1


def test_eval_json_is_the_manifest_plus_the_outcome(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    result = invoke("eval", "--json")
    assert result.exit_code == 1
    document = _valid("run", result.stdout)  # nothing but the document on stdout
    assert document["exit_code"] == 1
    verdicts = {(p["id"], p["agent"]): p["verdict"] for p in document["pairs"]}
    assert verdicts == {("bad", "literal"): "fail", ("bad", "s"): "error", ("good", "literal"): "pass"}
    folder = Path(document["folder"])
    manifest = _valid("run", (folder / "manifest.json").read_text())
    assert manifest["run_id"] == document["run_id"] == folder.name
    for pair in manifest["pairs"]:
        assert (folder / pair["result"]["folder"] / "trial-1" / "result.json").is_file()


def test_eval_dry_run_json_lists_the_refusals(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    outside_ci = invoke("eval", "--dry-run", "--json", env={"CI": None})
    assert outside_ci.exit_code == 0  # a dry run starts no agent: CI=true is the real run's business
    assert _valid("list", outside_ci.stdout)["refusals"] == []
    write(
        tmp_path / "evals/s.eval.yaml",
        "prompt_text: 'use {{ secrets.API_KEY }}'\nsecrets: [API_KEY]\nagents: [literal]\n",
    )
    result = invoke("eval", "--dry-run", "--json", env={"API_KEY": None})
    assert result.exit_code == 2
    assert any("API_KEY" in refusal for refusal in _valid("list", result.stdout)["refusals"])


def test_agents_json(invoke: Invoke) -> None:
    result = invoke("agents", "--json")
    assert result.exit_code == 0
    document = _valid("agents", result.stdout)
    literal = next(a for a in document["agents"] if a["name"] == "literal")
    assert literal["available"] is True and literal["reason"] is None


@pytest.mark.parametrize("broken", [False, True])
def test_validate_json(invoke: Invoke, tmp_path: Path, broken: bool) -> None:
    _evals(tmp_path)
    if broken:
        write(tmp_path / "evals/typo.eval.yaml", "prompt_text: hi\nagents: [literal]\ntrails: 3\n")
    result = invoke("validate", "--json")
    document = _valid("validate", result.stdout)
    assert document["ok"] is not broken
    assert result.exit_code == (2 if broken else 0)
    if broken:
        (problem,) = document["problems"]
        assert problem["file"].endswith("typo.eval.yaml") and problem["line"] == 3
        assert problem["field"] == "trails"
    else:
        assert sorted(e["id"] for e in document["evals"]) == ["bad", "good"]


def test_validate_json_of_the_examples(invoke: Invoke) -> None:
    document = _valid("validate", invoke("validate", "--json", str(EXAMPLES / "evals")).stdout)
    assert len(document["evals"]) == 3
