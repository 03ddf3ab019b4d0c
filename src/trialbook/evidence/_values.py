"""Value-level checks shared by the encoder and the decoder, each naming the JSON location it rejects."""

from __future__ import annotations

import json
import math
from typing import Any

from ._errors import EvidenceSchemaError, at_index, at_key
from ._json import JsonObject, JsonValue
from ._safe import unsafe_configuration_keys

__all__ = ["JSON_NAMES", "check_configuration", "expect_object", "json_value", "kind", "scalar", "show"]

JSON_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def kind(value: object) -> str:
    """How a value looks in JSON terms, for messages such as ``expected an integer, got a boolean``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a Python {type(value).__name__}"


def show(value: object) -> str:
    """A value as it reads in the JSON file, so messages quote ``null`` and ``"x"`` rather than Python."""
    return json.dumps(value, ensure_ascii=False, default=repr)


def json_value(value: object, where: str) -> JsonValue:
    """A fresh copy of free-form JSON, refusing anything that would not come back from a file unchanged."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EvidenceSchemaError(where, f"{value} is not a JSON number")
        return value
    if isinstance(value, list):
        return [json_value(item, at_index(where, i)) for i, item in enumerate(value)]
    if isinstance(value, dict):
        out: JsonObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EvidenceSchemaError(where, f"object key {key!r} is not a string")
            out[key] = json_value(item, at_key(where, key))
        return out
    raise EvidenceSchemaError(where, f"{kind(value)} is not a JSON value (use lists, objects and scalars)")


def scalar(value: object, hint: type, where: str) -> bool | int | float | str:
    """Check a scalar against its field type; ``True`` is never an integer, ``3`` is a fine number."""
    ok = isinstance(value, hint) and not (hint is not bool and isinstance(value, bool))
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        ok, value = True, float(value)
    if hint is float and ok and not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise EvidenceSchemaError(where, f"{value} is not a JSON number")
    if not ok:
        raise EvidenceSchemaError(where, f"expected {JSON_NAMES[hint]}, got {kind(value)}")
    return value  # type: ignore[return-value]


def check_configuration(value: JsonValue, where: str) -> None:
    """Refuse a configuration snapshot that still holds a sensitive key, naming the first one."""
    unsafe = unsafe_configuration_keys(value, where)
    if unsafe:
        raise EvidenceSchemaError(
            unsafe[0],
            "credentials, environment, commands and handlers never go into evidence; "
            "build the snapshot with trialbook.evidence.safe_configuration()",
        )


def expect_object(data: Any, where: str) -> dict[str, Any]:
    """The value as a JSON object with string keys, or an error saying what it is instead."""
    if not isinstance(data, dict):
        raise EvidenceSchemaError(where, f"expected an object, got {kind(data)}")
    for key in data:
        if not isinstance(key, str):
            raise EvidenceSchemaError(where, f"object key {key!r} is not a string")
    return data
