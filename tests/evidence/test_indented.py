"""``dumps_indented`` writes exactly what ``json.dumps(..., indent=2)`` writes, and fails as it fails."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.evidence._indented import dumps_indented


def _standard(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)


_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()  # any code point, lone surrogates and control characters included
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.lists(inner, max_size=5).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=400)
@given(_values)
def test_the_text_is_the_standard_librarys(value: Any) -> None:
    assert dumps_indented(value) == _standard(value)


class _Level(enum.IntEnum):
    HIGH = 3


class _Name(str):
    pass


@pytest.mark.parametrize(
    "value",
    [
        {1: "int key", None: "none key", 2.5: "float key", False: "bool key"},
        {"level": _Level.HIGH, "name": _Name("subclass")},
        [{"a": [1, 2, {"b": ()}]}, {}, []],
        {"deep": [[[[[[[["x"]]]]]]]]},
    ],
    ids=["keys that are not strings", "subclasses", "empty containers", "nesting"],
)
def test_values_of_other_types_come_out_as_the_standard_library_writes_them(value: Any) -> None:
    assert dumps_indented(value) == _standard(value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {"set": {1}}, [object()], {("a",): 1}])
def test_what_json_cannot_hold_fails_with_the_standard_librarys_error(bad: Any) -> None:
    with pytest.raises((ValueError, TypeError)) as ours:
        dumps_indented(bad)
    with pytest.raises((ValueError, TypeError)) as theirs:
        _standard(bad)
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_nesting_too_deep_for_recursion_fails_as_the_standard_library_fails() -> None:
    value: list[Any] = []
    for _ in range(100_000):
        value = [value]
    with pytest.raises(RecursionError):
        dumps_indented(value)
