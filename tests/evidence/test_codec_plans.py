"""The codec works out each field type once; what it writes and the errors it names must not change by it."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook.evidence import AgentResult, EvidenceSchemaError, dump_result, load_result
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
