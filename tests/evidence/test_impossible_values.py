"""Values no real run produces are refused on load (and on save), naming the field."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook.evidence import (
    CopilotResult,
    EvidenceSchemaError,
    RequestAudit,
    UsageEntry,
    dump_result,
    load_result,
)

DIGEST = hashlib.sha256(b"instructions").hexdigest()


def audit(**fields: Any) -> RequestAudit:
    base: dict[str, Any] = dict(
        request_id="r1",
        model="m",
        tool_names=(),
        reasoning_effort=None,
        image_details=("auto",),
        image_count=1,
        instructions_sha256=DIGEST,
    )
    return RequestAudit(**{**base, **fields})


def result(**fields: Any) -> CopilotResult:
    base: dict[str, Any] = dict(
        agent_name="copilot", agent_version=None, success=True, error=None, stop_reason="completed"
    )
    return CopilotResult(**{**base, **fields})


def usage(**fields: Any) -> UsageEntry:
    base: dict[str, Any] = dict(
        model="m",
        input_tokens=1,
        output_tokens=1,
        cache_read_tokens=None,
        cache_write_tokens=None,
        reasoning_tokens=None,
        reasoning_effort=None,
        duration_ms=None,
    )
    return UsageEntry(**{**base, **fields})


def test_a_sound_record_round_trips() -> None:
    record = result(request_audit=(audit(),), usage=(usage(),), tool_calls_admitted=0, premium_requests=0.0)
    assert load_result(dump_result(record)) == record


@pytest.mark.parametrize(
    ("change", "location", "message"),
    [
        ({"image_count": 5, "image_details": []}, "request_audit[0].image_count", "image_details lists 0"),
        ({"image_count": -1, "image_details": []}, "request_audit[0].image_count", "negative"),
        ({"instructions_sha256": "not-hex" + "0" * 57}, "request_audit[0].instructions_sha256", "SHA-256"),
        ({"instructions_sha256": ""}, "request_audit[0].instructions_sha256", "SHA-256"),
    ],
)
def test_impossible_audit_values_are_refused_on_load(
    change: dict[str, Any], location: str, message: str
) -> None:
    data = dump_result(result(request_audit=(audit(),)))
    data["request_audit"][0].update(change)  # type: ignore[index,union-attr]
    with pytest.raises(EvidenceSchemaError) as caught:
        load_result(data)
    assert location in str(caught.value) and message in str(caught.value)


@pytest.mark.parametrize("name", ["input_tokens", "output_tokens", "reasoning_tokens", "duration_ms"])
def test_negative_usage_is_refused_on_load(name: str) -> None:
    data = dump_result(result(usage=(usage(),)))
    data["usage"][0][name] = -3  # type: ignore[index,call-overload]
    with pytest.raises(EvidenceSchemaError, match=rf"usage\[0\]\.{name}: -3(\.0)? is negative"):
        load_result(data)


@pytest.mark.parametrize("name", ["tool_calls_admitted", "premium_requests", "duration_ms", "cost_usd"])
def test_negative_counts_are_refused_on_load_and_on_save(name: str) -> None:
    data = dump_result(result())
    data[name] = -1
    with pytest.raises(EvidenceSchemaError, match=rf"{name}: -1(\.0)? is negative"):
        load_result(data)
    with pytest.raises(EvidenceSchemaError, match=rf"{name}: -1(\.0)? is negative"):
        dump_result(result(**{name: -1}))


@given(st.integers(min_value=0, max_value=20), st.integers(min_value=0, max_value=20))
def test_image_count_must_match_image_details(count: int, listed: int) -> None:
    record = result(request_audit=(audit(image_count=count, image_details=("low",) * listed),))
    if count == listed:
        assert load_result(dump_result(record)) == record
    else:
        with pytest.raises(EvidenceSchemaError, match="image_count"):
            dump_result(record)
