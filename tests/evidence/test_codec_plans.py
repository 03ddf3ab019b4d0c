"""The codec works out each field type once; what it writes and the errors it names must not change by it."""

from __future__ import annotations

import gc
import json
import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.contracts import golden
from trialbook.evidence import (
    AgentResult,
    EvidenceSchemaError,
    SuiteReport,
    Turn,
    dump_result,
    load_result,
    suite_to_json,
)
from trialbook.evidence import _codec as codec
from trialbook.evidence._errors import at_key

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _reference_at_key(location: str, key: str) -> str:
    """The location format as the codec has always written it, with no caching."""
    part = key if _PLAIN.fullmatch(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
    if not location:
        return part
    return f"{location}{part}" if part.startswith("[") else f"{location}.{part}"


@given(st.text(max_size=12), st.text(max_size=20))
def test_locations_read_as_they_always_did(location: str, key: str) -> None:
    # Twice: the second answer comes from the cache.
    assert at_key(location, key) == _reference_at_key(location, key)
    assert at_key(location, key) == _reference_at_key(location, key)


def _result(**changes: object) -> AgentResult:
    base = AgentResult(agent_name="a", agent_version="1", success=True, error=None, stop_reason="completed")
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_bad_value_is_refused_after_good_ones_of_the_same_type_were_written() -> None:
    # Good records first, so every field type's plan is cached before the bad one comes.
    for stop in ("completed", "timeout", None):
        assert load_result(dump_result(_result(stop_reason=stop))) == _result(stop_reason=stop)
    with pytest.raises(EvidenceSchemaError, match=r"result\.stop_reason.*is not one of"):
        dump_result(_result(stop_reason="finished"))
    with pytest.raises(EvidenceSchemaError, match=r"result\.success.*expected a boolean"):
        dump_result(_result(success="yes"))
    with pytest.raises(EvidenceSchemaError, match=r"result\.configuration\[\"odd key\"\]"):
        dump_result(_result(configuration={"odd key": float("nan")}))


def _results_in(suite: SuiteReport) -> list[AgentResult]:
    return [execution.result for test in suite.tests for execution in test.executions]


def test_a_suite_holds_each_result_as_dump_result_wrote_it_and_as_encoding_afresh_would() -> None:
    suite = golden.rich_suite()
    afresh = suite_to_json(suite)  # nothing remembered yet: every result encoded in place
    written = [dump_result(result) for result in _results_in(suite)]  # each trial's result.json
    assert written and len(codec._ENCODED) >= len(written)
    again: Any = suite_to_json(suite)
    assert again == afresh
    assert json.dumps(again) == json.dumps(afresh)  # the same keys in the same order
    embedded = [execution["result"] for test in again["tests"] for execution in test["executions"]]
    assert embedded == written


def test_a_result_that_is_gone_is_forgotten_and_a_changed_copy_is_encoded_afresh() -> None:
    first = _result(agent_version="1.0")
    encoded = dump_result(first)
    assert id(first) in codec._ENCODED
    changed = replace(first, agent_version="2.0")  # a new object: never served the old JSON
    assert dump_result(changed)["agent_version"] == "2.0"
    assert encoded["agent_version"] == "1.0"
    key = id(first)
    del first
    gc.collect()
    assert key not in codec._ENCODED or codec._ENCODED[key][0]() is not None


class _Text(str):
    """A ``str`` subclass: a string all the same, written as one."""


_BAD_CONTENT = Turn("assistant", 5)  # type: ignore[arg-type]
_BAD_ID = Turn("user", "hi", ("a", 3))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("changes", "location", "problem"),
    [
        ({"turns": (Turn("user", "hi"), _BAD_CONTENT)}, r"result\.turns\[1\]\.content", "expected"),
        ({"turns": (_BAD_ID,)}, r"result\.turns\[0\]\.tool_call_ids\[1\]", "expected"),
        ({"capture_errors": ("fine", True)}, r"result\.capture_errors\[1\]", "expected a string"),
        ({"success": 1}, r"result\.success", "expected a boolean"),
        ({"duration_ms": float("inf")}, r"result\.duration_ms", "not a JSON number"),
        ({"raw_events": ({"a": [1, {"b": float("nan")}]},)}, r"result\.raw_events\[0\]\.a\[1\]\.b", "number"),
        (
            {"configuration": {"ok": {"odd key": object()}}},
            r"result\.configuration\.ok\[\"odd key\"\]",
            "JSON",
        ),
    ],
)
def test_a_refused_value_deep_in_a_result_is_named_by_its_whole_location(
    changes: dict[str, object], location: str, problem: str
) -> None:
    # Locations are spelled out only when a value is refused: each level of the path must still be there.
    with pytest.raises(EvidenceSchemaError, match=rf"^{location}: .*{problem}"):
        dump_result(_result(**changes))


def test_values_of_a_near_type_are_written_as_their_field_type_says_or_refused() -> None:
    # A ``str`` subclass is a string; an int where a number goes is that number; a bool is no integer.
    written = dump_result(_result(agent_name=_Text("named"), duration_ms=3))
    assert written["agent_name"] == "named" and written["duration_ms"] == 3.0
    assert type(written["duration_ms"]) is float
    with pytest.raises(EvidenceSchemaError, match=r"^result\.turns\[0\]\.role: expected a string"):
        dump_result(_result(turns=(Turn(b"user", None),)))  # type: ignore[arg-type]
