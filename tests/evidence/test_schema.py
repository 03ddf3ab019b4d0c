"""The committed JSON Schema is the generated one, and it is a valid draft 2020-12 schema."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from tests.contracts import golden
from trialbook.evidence import OUTCOMES, STOP_REASONS, suite_json_schema, suite_to_json
from trialbook.evidence._jsonschema import render_schema

REGENERATE = (
    "uv run --frozen python -m trialbook.evidence._jsonschema > src/trialbook/evidence/schema-4.0.json"
)


def _nested(error: jsonschema.ValidationError) -> list[jsonschema.ValidationError]:
    found: list[jsonschema.ValidationError] = []
    for sub in error.context or ():
        found += [sub, *_nested(sub)]
    return found


def committed() -> str:
    return resources.files("trialbook.evidence").joinpath("schema-4.0.json").read_text(encoding="utf-8")


def test_committed_schema_matches_the_generator() -> None:
    assert committed() == render_schema(), (
        f"schema-4.0.json is out of date with the evidence model; run: {REGENERATE}"
    )


def test_the_regenerate_command_prints_the_committed_schema() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-W", "error", "-m", "trialbook.evidence._jsonschema"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout == committed()
    assert done.stderr == ""


def test_schema_is_valid_draft_2020_12_and_strict() -> None:
    schema: Any = suite_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    defs = schema["$defs"]
    for name, definition in defs.items():
        if name != "JsonValue":
            assert definition["additionalProperties"] is False, name
            # Every key is required but the few written only when set, which old files lack.
            optional = {"outside_writes", "network_refused"} if name.endswith("Result") else set()
            assert definition["required"] == [p for p in definition["properties"] if p not in optional], name
    assert defs["CopilotResult"]["properties"]["result_type"] == {
        "description": "Which result class this object is, so it loads back as the same class.",
        "const": "copilot",
    }
    assert defs["AgentResult"]["properties"]["stop_reason"]["anyOf"][0]["enum"] == list(STOP_REASONS)
    assert defs["TestReport"]["properties"]["outcome"]["enum"] == list(OUTCOMES)


def test_schema_rejects_what_the_loader_rejects_structurally() -> None:
    validator = jsonschema.Draft202012Validator(json.loads(committed()))
    doc = json.loads(json.dumps(suite_to_json(golden.rich_suite())))
    validator.validate(doc)
    del doc["tests"][2]["executions"][0]["result"]["usage"][1]["input_tokens"]
    messages = [e.message for error in validator.iter_errors(doc) for e in [error, *_nested(error)]]
    assert "'input_tokens' is a required property" in messages
    old = json.loads((golden.DATA / golden.OLD).read_text(encoding="utf-8"))
    assert not validator.is_valid(old)
