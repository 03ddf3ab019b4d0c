"""The eval-file JSON Schema: valid itself, accepts what the loader accepts, and lists every key it reads."""

import textwrap
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from trialbook.evalfiles import eval_file_schema
from trialbook.evalfiles._read import READERS
from trialbook.evalfiles._read_assertions import ASSERTION_READERS

from .helpers import load, write
from .test_load_ok import ARCHITECTURE_EXAMPLE, write_example


def validator() -> jsonschema.Draft202012Validator:
    schema = eval_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_example_the_loader_accepts_validates(project: Path) -> None:
    write_example(project)
    assert len(load("evals")) == 1
    document = yaml.safe_load(ARCHITECTURE_EXAMPLE)
    assert list(validator().iter_errors(document)) == []


@pytest.mark.parametrize(
    "document",
    [
        {"prompt_text": "hi", "agents": ["literal"], "trails": 3},
        {"prompt_text": "hi", "agents": ["literal"], "trials": 0},
        {"prompt_text": "hi", "prompt": "p.md", "agents": ["literal"]},
        {"agents": ["literal"]},
        {"prompt_text": "hi", "agents": ["literal"], "timeout": "10 minutes"},
        {"prompt_text": "hi", "agents": ["literal"], "pass_rate": 1.5},
        {"prompt_text": "hi", "agents": ["literal"], "shims": {"npm": "passthru"}},
        {"prompt_text": "hi", "agents": ["literal"], "assert": [{"rann": "x"}]},
        {"prompt_text": "hi", "agents": ["literal"], "assert": [{"ran": "a", "not_ran": "b"}]},
        {"prompt_text": "hi", "agents": ["literal"], "assert": [{"file_contains": {"path": "x"}}]},
        {"prompt_text": "hi", "agents": [{"model": "gpt-5.2"}]},
    ],
)
def test_documents_the_loader_refuses_are_refused(document: dict[str, Any]) -> None:
    assert list(validator().iter_errors(document)) != []


def test_every_key_the_loader_reads_is_in_the_schema() -> None:
    schema: Any = eval_file_schema()
    assert set(READERS) == set(schema["properties"])
    assertion = schema["$defs"]["assertion"]
    assert set(ASSERTION_READERS) == set(assertion["properties"])
    kinds = assertion["properties"]
    assert set(kinds["file_contains"]["properties"]) == {"path", "pattern"}
    assert set(kinds["assert_that"]["properties"]) == {"name", "check"}
    assert set(kinds["succeeds"]["anyOf"][1]["properties"]) == {"command", "exit_code", "timeout"}
    sandbox_keys = {"template", "exclude", "isolation", "network"}
    assert set(schema["properties"]["sandbox"]["properties"]) == sandbox_keys


def test_the_nested_keys_the_loader_accepts_validate(project: Path) -> None:
    body = """
    prompt_text: hi
    agents: [literal]
    shims: {neon: stub, npm: passthrough, git: {script: "true"}}
    assert:
      - succeeds: {command: npm test, exit_code: 1, timeout: 30s}
      - succeeds: npm test
    timeout: 90
    max_cost_usd: null
    """
    write(project, "evals/x.eval.yaml", body)
    assert len(load("evals")) == 1
    assert list(validator().iter_errors(yaml.safe_load(textwrap.dedent(body)))) == []
