"""HistoryLine: canonical JSON, strict loading with file:line errors, unknown stays unknown."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from trialbook.errors import ConfigError
from trialbook.history import LINE_VERSION, HistoryLine, format_started_at, parse_started_at

from .helpers import line


def _obj(**changes: Any) -> dict[str, Any]:
    obj = line("demo").to_json()
    obj.update(changes)
    return obj


def test_canonical_line_is_sorted_compact_single_line_and_round_trips() -> None:
    original = line("a/ü", "copilot", cost_usd=None, extra={"note": "multi\nline", "b": 1})
    text = original.to_json_line()
    assert "\n" not in text
    assert text.startswith('{"agent":"copilot",')
    assert ", " not in text
    assert json.loads(text)["line_version"] == LINE_VERSION
    assert "ü" in text
    assert HistoryLine.from_json(json.loads(text), "f.jsonl:1") == original
    assert list(json.loads(text)) == sorted(json.loads(text))


def test_unknown_values_stay_null_not_zero() -> None:
    obj = json.loads(line(cost_usd=None, duration_s=None, pass_rate=None, passed=0).to_json_line())
    assert obj["cost_usd"] is None
    assert obj["duration_s"] is None
    assert obj["pass_rate"] is None
    assert obj["model"] is None


def test_extra_may_be_omitted_when_loading() -> None:
    obj = _obj()
    del obj["extra"]
    assert HistoryLine.from_json(obj, "f:1").extra == {}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"verdict": "passed"}, "field 'verdict'"),
        ({"trials": True}, "field 'trials'"),
        ({"passed": 4}, "field 'passed': 4 is more than trials"),
        ({"pass_rate": 1.5}, "field 'pass_rate'"),
        ({"threshold": None}, "field 'threshold'"),
        ({"cost_usd": -1}, "field 'cost_usd'"),
        ({"cost_usd": "0.1"}, "field 'cost_usd'"),
        ({"started_at": "2025-01-01 12:00:00"}, "field 'started_at'"),
        ({"started_at": "2025-01-01T12:00:00+00:00"}, "field 'started_at'"),
        ({"model": ""}, "field 'model'"),
        ({"run_id": "not-hex"}, "field 'run_id'"),
        ({"extra": []}, "field 'extra'"),
        ({"line_version": 2}, "field 'line_version'"),
        ({"surprise": 1}, "unknown field 'surprise'"),
    ],
)
def test_bad_fields_are_named_with_file_and_line(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        HistoryLine.from_json(_obj(**changes), "history/demo.jsonl:7")
    assert "history/demo.jsonl:7: " + message in str(caught.value)


def test_missing_fields_are_each_listed() -> None:
    obj = _obj()
    del obj["cache_key"], obj["verdict"]
    with pytest.raises(ConfigError) as caught:
        HistoryLine.from_json(obj, "f:3")
    assert caught.value.problems == ["f:3: missing field 'cache_key'", "f:3: missing field 'verdict'"]


def test_not_an_object() -> None:
    with pytest.raises(ConfigError, match="f:1: a history line must be a JSON object"):
        HistoryLine.from_json([1, 2], "f:1")


def test_a_line_cannot_be_built_invalid() -> None:
    with pytest.raises(ValueError, match="field 'verdict'"):
        line(verdict="maybe")


def test_started_at_format_and_parse() -> None:
    moment = datetime(2025, 3, 4, 5, 6, 7, 890000, tzinfo=timezone(timedelta(hours=2)))
    text = format_started_at(moment)
    assert text == "2025-03-04T03:06:07.890000Z"
    assert parse_started_at(text) == moment
    assert format_started_at(datetime(2025, 1, 1, tzinfo=UTC)) == "2025-01-01T00:00:00Z"
    # Text order is not time order, which is why latest() compares parsed times.
    assert "2025-01-01T00:00:00.5Z" < "2025-01-01T00:00:00Z"
    assert parse_started_at("2025-01-01T00:00:00.5Z") > parse_started_at("2025-01-01T00:00:00Z")
    with pytest.raises(ValueError, match="timezone-aware"):
        format_started_at(datetime(2025, 1, 1))  # noqa: DTZ001
