"""Contract: schema-4.0 evidence saves everything, loads strictly, and is published atomically.

These checks run the real producer and reader against each other and against the golden files; no model is
called. Run them alone with ``uv run --frozen python -m pytest tests/contracts/test_native_evidence.py
tests/contracts/test_usage_evidence.py -q -o addopts=``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from tests.contracts import golden, strategies
from trialbook.evidence import (
    AgentResult,
    CopilotResult,
    EvidenceSchemaError,
    EvidenceWriteError,
    SuiteReport,
    ToolCall,
    load_suite,
    publish_json,
    save_suite,
    suite_from_json,
    suite_to_json,
)

# Free-form JSON (not records): a key removed from these is a different value, not a missing field.
FREE_FORM = {"properties", "configuration", "arguments", "raw_events", "outcome_counts"}


def _validator() -> jsonschema.Draft202012Validator:
    text = resources.files("trialbook.evidence").joinpath("schema-4.0.json").read_text(encoding="utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


VALIDATOR = _validator()


def _golden(relative: str) -> Path:
    return golden.DATA / relative


def _valid_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(_golden(golden.VALID).read_text(encoding="utf-8"))
    return doc


def _record_keys(node: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every (object location, key) of a record object in a saved suite."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield where, key
            if key not in FREE_FORM:
                yield from _record_keys(value, f"{where}.{key}" if where else key)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _record_keys(value, f"{where}[{index}]")


def _remove(doc: dict[str, Any], where: str, key: str) -> None:
    node: Any = doc
    if where:
        for part in where.replace("]", "").replace("[", ".").split("."):
            node = node[int(part)] if part.isdigit() else node[part]
    del node[key]


ALL_KEYS = list(_record_keys(_valid_doc()))


# -- golden files ---------------------------------------------------------------------------------------


def test_golden_files_are_current() -> None:
    expected = golden.golden_files()
    on_disk = {p.relative_to(golden.DATA).as_posix() for p in golden.DATA.rglob("*.json")}
    assert on_disk == set(expected), f"golden files differ from the generator; run {golden.REGENERATE}"
    for relative, text in expected.items():
        assert _golden(relative).read_text(encoding="utf-8") == text, (
            f"{relative} is not what the producer writes now; if that is intended, run {golden.REGENERATE}"
        )


def test_valid_golden_file_loads_to_the_rich_suite() -> None:
    loaded = load_suite(_golden(golden.VALID))
    assert loaded == golden.rich_suite()
    session = loaded.tests[1].executions[0].result
    assert type(session) is CopilotResult
    assert type(loaded.tests[0].executions[0].result) is AgentResult
    child = session.subagent_invocations[0].result
    assert child is not None
    assert type(child) is CopilotResult
    grandchild = child.subagent_invocations[0].result
    assert grandchild is not None
    assert grandchild.turns[0].content == "checked the schema"
    assert session.subagent_invocations[1].result is None


def test_valid_golden_file_matches_the_json_schema() -> None:
    VALIDATOR.validate(_valid_doc())


def test_old_schema_is_rejected_with_the_fix() -> None:
    with pytest.raises(EvidenceSchemaError) as caught:
        load_suite(_golden(golden.OLD))
    message = str(caught.value)
    assert str(_golden(golden.OLD)) in message
    assert 'schema_version: this evidence is schema "3.0"' in message
    assert "regenerate the evidence with the current producer" in message


@pytest.mark.parametrize("name", sorted(golden.INVALID))
def test_invalid_golden_files_are_rejected(name: str) -> None:
    path = _golden(f"invalid/{name}.json")
    with pytest.raises(EvidenceSchemaError) as caught:
        load_suite(path)
    assert golden.INVALID[name][1] in str(caught.value)
    assert str(caught.value).startswith(f"{path}: ")


@pytest.mark.parametrize("name", sorted(golden.TEXT_DEFECTS))
def test_files_that_are_not_strict_json_are_rejected(name: str) -> None:
    with pytest.raises(EvidenceSchemaError, match=golden.TEXT_DEFECTS[name]):
        load_suite(_golden(f"invalid/{name}.json"))


# -- every record field is required, at every level ------------------------------------------------------


def test_the_walk_reaches_every_level() -> None:
    wheres = {where for where, _ in ALL_KEYS}
    deepest = "tests[1].executions[0].result.subagent_invocations[0].result.subagent_invocations[0].result"
    assert {"", "metadata", "tests[2].executions[0].result.usage[1]", deepest} <= wheres
    assert f"{deepest}.usage[0]" in wheres
    assert "tests[1].executions[0].result.all_tool_calls[2].additional_images[1]" in wheres
    assert "tests[1].executions[0].result.skill_discovery.skills[1]" in wheres


@pytest.mark.parametrize(("where", "key"), ALL_KEYS, ids=[f"{w}.{k}" if w else k for w, k in ALL_KEYS])
def test_every_missing_field_is_named(where: str, key: str) -> None:
    doc = _valid_doc()
    _remove(doc, where, key)
    with pytest.raises(EvidenceSchemaError) as caught:
        suite_from_json(doc)
    assert str(caught.value) == f"{where or '(top level)'}: missing field '{key}'"


def test_defaults_are_never_filled_even_where_the_model_has_one() -> None:
    doc = _valid_doc()
    del doc["tests"][3]["executions"]  # TestReport.executions defaults to () in Python
    with pytest.raises(EvidenceSchemaError, match=r"^tests\[3\]: missing field 'executions'$"):
        suite_from_json(doc)


def test_unknown_fields_are_rejected_at_the_top_too() -> None:
    doc = _valid_doc()
    doc["comment"] = "hand-edited"
    with pytest.raises(EvidenceSchemaError, match=r"^\(top level\): unknown field 'comment'"):
        suite_from_json(doc)


# -- round trips -----------------------------------------------------------------------------------------


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(report=strategies.suites)
def test_whole_suites_round_trip_through_a_file(report: SuiteReport) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "suite.json"
        save_suite(report, path)
        loaded = load_suite(path)
        saved = json.loads(path.read_text(encoding="utf-8"))
    assert loaded == report
    for before, after in zip(report.tests, loaded.tests, strict=True):
        for one, two in zip(before.executions, after.executions, strict=True):
            assert type(one.result) is type(two.result)
    VALIDATOR.validate(saved)
    assert saved["outcome_counts"] == report.outcome_counts


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result=strategies.copilot_results(depth=3))
def test_nested_child_sessions_round_trip_as_copilot_results(result: CopilotResult) -> None:
    report = golden.rich_suite()
    report = replace(
        report,
        tests=(
            replace(report.tests[2], executions=(replace(report.tests[2].executions[0], result=result),)),
        ),
    )
    loaded = suite_from_json(json.loads(json.dumps(suite_to_json(report))))
    loaded_result = loaded.tests[0].executions[0].result
    assert loaded_result == result
    assert [type(r) for r in loaded_result.execution_results()] == [
        type(r) for r in result.execution_results()
    ]


def test_null_and_empty_string_stay_distinct() -> None:
    empty = ToolCall("c-1", "echo", {}, True, True, "", None)
    missing = ToolCall("c-2", "echo", {}, True, True, None, None)
    result = AgentResult(
        agent_name="x",
        agent_version="",
        success=True,
        error=None,
        stop_reason=None,
        all_tool_calls=(empty, missing),
    )
    report = replace(golden.rich_suite(), tests=())
    report = replace(
        report,
        tests=(
            replace(
                golden.rich_suite().tests[3],
                executions=(replace(golden.rich_suite().tests[0].executions[0], result=result),),
            ),
        ),
    )
    data: Any = suite_to_json(report)
    saved = data["tests"][0]["executions"][0]["result"]
    assert saved["agent_version"] == ""
    assert saved["error"] is None
    assert saved["stop_reason"] is None
    assert [c["result"] for c in saved["all_tool_calls"]] == ["", None]
    assert [c["evidence_complete"] for c in saved["all_tool_calls"]] == [True, False]
    loaded = suite_from_json(json.loads(json.dumps(data))).tests[0].executions[0].result
    assert loaded.agent_version == ""
    assert loaded.error is None
    assert [c.result for c in loaded.all_tool_calls] == ["", None]


def test_images_are_base64_and_round_trip_byte_for_byte() -> None:
    doc = _valid_doc()
    call = doc["tests"][1]["executions"][0]["result"]["all_tool_calls"][2]
    assert call["image_content"] == "iVBORw0KGgoAAAANSUhEUg=="
    assert call["additional_images"][1] == {"content": "", "media_type": None}
    loaded = suite_from_json(doc).tests[1].executions[0].result.all_tool_calls[2]
    assert loaded.image_content == golden.PNG
    assert [image.content for image in loaded.additional_images] == [golden.GIF, b""]


def test_a_configuration_with_credentials_is_refused_on_save(tmp_path: Path) -> None:
    result = AgentResult(
        agent_name="copilot",
        agent_version=None,
        success=True,
        error=None,
        stop_reason="completed",
        configuration={"model": "gpt-5", "provider": {"type": "openai", "apiKey": "sk-live"}},
    )
    report = replace(
        golden.rich_suite(),
        tests=(
            replace(
                golden.rich_suite().tests[0],
                executions=(replace(golden.rich_suite().tests[0].executions[0], result=result),),
            ),
        ),
    )
    target = tmp_path / "suite.json"
    with pytest.raises(
        EvidenceSchemaError, match=r"tests\[0\]\.executions\[0\]\.result\.configuration\.provider\.apiKey"
    ):
        save_suite(report, target)
    assert not target.exists()
    assert os.listdir(tmp_path) == []


# -- publication -------------------------------------------------------------------------------------------


def _publish_old(folder: Path) -> tuple[Path, bytes]:
    target = folder / "suite.json"
    save_suite(replace(golden.rich_suite(), tests=()), target)
    return target, target.read_bytes()


def test_a_failed_write_keeps_the_old_file(tmp_path: Path) -> None:
    """A real EFBIG half-way through the write: the file-size limit is lower than the new suite."""
    target, old = _publish_old(tmp_path)
    limit = len(old) + 4096
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from tests.contracts import golden
        from trialbook.evidence import EvidenceWriteError, save_suite
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))
        try:
            save_suite(golden.rich_suite(), {str(target)!r})
        except EvidenceWriteError as exc:
            print(exc)
            sys.exit(0)
        sys.exit("the save did not fail")
        """
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert f"could not save {target}: File too large" in done.stdout
    assert "the previous file there, if any, is unchanged" in done.stdout
    assert target.read_bytes() == old
    assert os.listdir(tmp_path) == ["suite.json"]
    assert load_suite(target).tests == ()


def test_a_failed_rename_keeps_what_was_there(tmp_path: Path) -> None:
    target = tmp_path / "suite.json"
    target.mkdir()
    (target / "keep.txt").write_text("still here", encoding="utf-8")
    with pytest.raises(EvidenceWriteError, match=r"could not save .*suite\.json: Is a directory"):
        save_suite(golden.rich_suite(), target)
    assert (target / "keep.txt").read_text(encoding="utf-8") == "still here"
    assert os.listdir(tmp_path) == ["suite.json"]


def test_a_serialization_failure_mid_way_leaves_no_partial_file(tmp_path: Path) -> None:
    target, old = _publish_old(tmp_path)
    data = {"first": "x" * 200_000, "then": float("nan")}  # fails after 200 kB are already written
    with pytest.raises(EvidenceWriteError, match="Out of range float values are not JSON compliant"):
        publish_json(target, data)  # type: ignore[arg-type]
    assert target.read_bytes() == old
    assert os.listdir(tmp_path) == ["suite.json"]


def test_an_invalid_report_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    target, old = _publish_old(tmp_path)
    suite = golden.rich_suite()
    bad = replace(suite.tests[0].executions[1].result, cost_usd=float("nan"))
    report = replace(
        suite,
        tests=(replace(suite.tests[0], executions=(replace(suite.tests[0].executions[1], result=bad),)),),
    )
    with pytest.raises(
        EvidenceSchemaError, match=r"suite\.json: tests\[0\]\.executions\[0\]\.result\.cost_usd: nan"
    ):
        save_suite(report, target)
    assert target.read_bytes() == old
    assert os.listdir(tmp_path) == ["suite.json"]


def test_a_missing_folder_is_a_clear_write_error(tmp_path: Path) -> None:
    with pytest.raises(EvidenceWriteError, match="No such file or directory"):
        save_suite(golden.rich_suite(), tmp_path / "absent" / "suite.json")


def test_saving_replaces_the_whole_file(tmp_path: Path) -> None:
    target, _ = _publish_old(tmp_path)
    save_suite(golden.rich_suite(), target)
    assert target.read_text(encoding="utf-8") == golden.golden_files()[golden.VALID]
    assert os.listdir(tmp_path) == ["suite.json"]
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert next(iter(doc)) == "schema_version"
