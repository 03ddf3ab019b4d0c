"""The strict codec's individual rules, each with the message a reader sees."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.contracts import golden
from trialbook.errors import ExitCode, TrialbookError
from trialbook.evidence import (
    AgentResult,
    CopilotResult,
    EvidenceSchemaError,
    EvidenceWriteError,
    SuiteReport,
    ToolCall,
    dump_result,
    load_result,
    load_suite,
    read_json,
    suite_from_json,
    suite_to_json,
)


def plain(**fields: Any) -> AgentResult:
    base: dict[str, Any] = {
        "agent_name": "x",
        "agent_version": None,
        "success": True,
        "error": None,
        "stop_reason": None,
    }
    return AgentResult(**{**base, **fields})


def dumped(result: AgentResult) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(json.dumps(dump_result(result)))
    return data


def test_errors_belong_to_the_trialbook_error_tree() -> None:
    assert issubclass(EvidenceSchemaError, TrialbookError)
    assert EvidenceSchemaError.exit_code == ExitCode.BAD_INPUT
    assert EvidenceWriteError.exit_code == ExitCode.FAILED


def test_result_objects_carry_their_class() -> None:
    assert dumped(plain())["result_type"] == "agent"
    copilot = CopilotResult(agent_name="c", agent_version=None, success=True, error=None, stop_reason=None)
    data = dumped(copilot)
    assert data["result_type"] == "copilot"
    assert type(load_result(data)) is CopilotResult
    assert list(data)[:2] == ["result_type", "agent_name"]


def test_load_result_prefixes_locations_with_the_given_path() -> None:
    data = dumped(plain(all_tool_calls=(ToolCall("1", "x", {}, True, True, "", None),)))
    del data["all_tool_calls"][0]["error"]
    with pytest.raises(EvidenceSchemaError, match=r"^trial-3\.all_tool_calls\[0\]: missing field 'error'$"):
        load_result(data, path="trial-3")


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("success", 1, "success: expected a boolean, got a number"),
        ("success", None, "success: expected a boolean, got null"),
        ("duration_ms", True, "duration_ms: expected a number, got a boolean"),
        ("duration_ms", "1.5", "duration_ms: expected a number, got a string"),
        ("agent_name", 3, "agent_name: expected a string, got a number"),
        ("turns", {}, "turns: expected an array, got an object"),
        ("usage", [[]], r"usage\[0\]: expected an object, got an array"),
        ("stop_reason", "done", 'stop_reason: "done" is not one of "completed", '),
        ("capture_errors", [None], r"capture_errors\[0\]: expected a string, got null"),
        ("configuration", [], "configuration: expected an object, got an array"),
        ("result_type", "copilot", "missing field 'premium_requests'"),
    ],
)
def test_wrong_types_are_named(key: str, value: Any, message: str) -> None:
    data = dumped(plain(duration_ms=1.5))
    data[key] = value
    with pytest.raises(EvidenceSchemaError, match=message):
        load_result(data)


def test_integers_are_accepted_for_numbers_but_not_the_other_way_round() -> None:
    data = dumped(plain())
    data["duration_ms"] = 12
    loaded = load_result(data)
    assert loaded.duration_ms == 12.0
    assert isinstance(loaded.duration_ms, float)
    suite: Any = suite_to_json(golden.rich_suite())
    suite["tests"][0]["executions"][0]["trial"] = 1.0
    with pytest.raises(
        EvidenceSchemaError, match=r"executions\[0\]\.trial: expected an integer, got a number"
    ):
        suite_from_json(suite)


def test_values_that_are_not_json_are_refused_on_save() -> None:
    with pytest.raises(
        EvidenceSchemaError, match=r"^result\.raw_events\[0\]\.at: a Python set is not a JSON value"
    ):
        dump_result(plain(raw_events=({"at": {1}},)))
    pair: Any = (1, 2)
    with pytest.raises(EvidenceSchemaError, match=r"arguments\[0\]: a Python tuple"):
        dump_result(plain(all_tool_calls=(ToolCall("1", "x", [pair], True, True, "", None),)))
    with pytest.raises(EvidenceSchemaError, match="duration_ms: inf is not a JSON number"):
        dump_result(plain(duration_ms=float("inf")))
    with pytest.raises(EvidenceSchemaError, match="turns: expected a tuple, got an array"):
        dump_result(plain(turns=[]))


def test_odd_property_names_are_quoted_in_locations() -> None:
    suite: Any = suite_to_json(golden.rich_suite())
    suite["tests"][0]["properties"] = {"pass rate": float("nan")}
    with pytest.raises(
        EvidenceSchemaError, match=r'tests\[0\]\.properties\["pass rate"\]: nan is not a JSON number'
    ):
        suite_from_json(suite)


def test_a_report_of_another_schema_is_not_saved_as_4_0() -> None:
    with pytest.raises(EvidenceSchemaError, match=r'writes only schema "4\.0", not "3\.0"'):
        suite_to_json(replace(golden.rich_suite(), schema_version="3.0"))


def test_top_level_must_be_an_object_with_a_version() -> None:
    with pytest.raises(EvidenceSchemaError, match=r"^\(top level\): expected an object, got an array$"):
        suite_from_json([])
    with pytest.raises(EvidenceSchemaError, match=r"^\(top level\): missing field 'schema_version'$"):
        suite_from_json({"tests": []})
    with pytest.raises(EvidenceSchemaError, match=r"schema_version: this evidence is schema 4,"):
        suite_from_json({"schema_version": 4})


def test_read_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(TrialbookError, match=r"could not read .*absent\.json"):
        load_suite(tmp_path / "absent.json")
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(EvidenceSchemaError, match=r"binary\.json: \(top level\): not UTF-8 text"):
        read_json(binary)


def test_a_suite_round_trips_with_an_empty_test_list() -> None:
    empty = SuiteReport(metadata=golden.rich_suite().metadata)
    data = suite_to_json(empty)
    assert data["tests"] == []
    assert suite_from_json(json.loads(json.dumps(data))) == empty
