"""``no_outside_writes``: read from eval files, checked against the evidence, saved compatibly."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.evalfiles.helpers import load, problems, write
from trialbook.assertions import no_outside_writes
from trialbook.assertions._outside import NOT_WATCHED
from trialbook.evidence import AgentResult, OutsideWrite, dump_result, load_result, suite_json_schema

RESULT = AgentResult(agent_name="s", agent_version=None, success=True, error=None, stop_reason="completed")
HEAD = "prompt_text: hi\nagents: [literal]\nassert:\n"


class Trial:
    def __init__(self, result: AgentResult) -> None:
        self.result = result


def test_unknown_fails_saying_how_to_know_and_allowed_globs_let_writes_through() -> None:
    check = no_outside_writes(["~/.cache/*"])
    unknown = check.check(Trial(RESULT))  # type: ignore[arg-type]
    assert (unknown.passed, unknown.actual) == (False, NOT_WATCHED)
    writes = (OutsideWrite("~/.cache/a/b", 3), OutsideWrite("/etc/x", 2), OutsideWrite("/etc/h", 0, True))
    seen = check.check(Trial(replace(RESULT, outside_writes=writes)))  # type: ignore[arg-type]
    assert not seen.passed
    assert seen.actual == "2 written outside the sandbox: /etc/x (2 bytes), /etc/h (removed)"
    assert seen.label == 'no_outside_writes ["~/.cache/*"]'
    clean = check.check(Trial(replace(RESULT, outside_writes=writes[:1])))  # type: ignore[arg-type]
    assert (clean.passed, clean.actual) == (True, "nothing written outside the sandbox")


def test_a_result_without_the_fields_is_saved_as_before_and_one_with_them_round_trips() -> None:
    plain = dump_result(RESULT)
    assert "outside_writes" not in plain and "network_refused" not in plain
    assert load_result(plain) == RESULT
    watched = replace(RESULT, outside_writes=(OutsideWrite("/etc/x", 2),))
    saved = json.loads(json.dumps(dump_result(watched)))
    assert saved["outside_writes"] == [{"path": "/etc/x", "size": 2, "removed": False}]
    assert load_result(saved) == watched
    defs: Any = suite_json_schema()["$defs"]
    result_schema = {**defs["AgentResult"], "$defs": defs}
    jsonschema.Draft202012Validator(result_schema).validate(saved)
    jsonschema.Draft202012Validator(result_schema).validate(plain)
    saved["outside_writes"] = [{"path": "/etc/x", "size": 2}]
    with pytest.raises(Exception, match="missing field 'removed'"):
        load_result(saved)


def test_eval_files_take_true_or_allow_and_refuse_anything_else(tmp_path: Path) -> None:
    write(tmp_path, "evals/a.eval.yaml", HEAD + "  - no_outside_writes: true\n")
    write(tmp_path, "evals/b.eval.yaml", HEAD + "  - no_outside_writes: {allow: ['/tmp/*']}\n")
    (a,) = load(tmp_path / "evals/a.eval.yaml")
    (b,) = load(tmp_path / "evals/b.eval.yaml")
    assert a.assertions[0].to_json() == {"kind": "no_outside_writes", "allow": []}
    assert b.assertions[0].to_json() == {"kind": "no_outside_writes", "allow": ["/tmp/*"]}
    for body in ("false", "{allow: ['']}", "{allow: x}", "{deny: []}"):
        bad = write(tmp_path, "evals/c.eval.yaml", HEAD + f"  - no_outside_writes: {body}\n")
        said = problems(bad)
        assert said and all("assert[0].no_outside_writes" in line for line in said), said
