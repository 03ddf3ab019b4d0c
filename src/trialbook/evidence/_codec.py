"""Schema-4.0 JSON for evidence records: every field written, nothing guessed back on load.

Encoding and decoding walk the dataclass fields and their types (see :mod:`._shape`), so the codec has no
per-class code to fall out of step with the model. The loader is deliberately unforgiving: a missing,
unknown or mistyped key anywhere is an error naming its location, defaults are never filled in, and each
derived property saved beside the fields must equal what the loaded record computes, so a hand-edited or
half-migrated file cannot pass for the real thing.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from typing import Any, get_args, get_origin

from ._errors import EvidenceSchemaError, at_index, at_key
from ._json import JsonObject, JsonValue
from ._report import SCHEMA_VERSION, SuiteReport
from ._result import AgentResult
from ._safe import unsafe_configuration_keys
from ._shape import (
    RESULT_TYPE_KEY,
    RESULT_TYPES,
    derived_members,
    field_members,
    is_json_value,
    is_literal,
    is_record,
    is_result,
    json_keys,
    optional_inner,
    result_tag,
)

__all__ = ["dump_result", "load_result", "suite_from_json", "suite_to_json"]

_JSON_NAMES = {bool: "a boolean", int: "an integer", float: "a number", str: "a string"}


def _kind(value: object) -> str:
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


def _show(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=repr)


def _json_value(value: object, where: str) -> JsonValue:
    """A fresh copy of free-form JSON, refusing anything that would not come back from a file unchanged."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EvidenceSchemaError(where, f"{value} is not a JSON number")
        return value
    if isinstance(value, list):
        return [_json_value(item, at_index(where, i)) for i, item in enumerate(value)]
    if isinstance(value, dict):
        out: JsonObject = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise EvidenceSchemaError(where, f"object key {key!r} is not a string")
            out[key] = _json_value(item, at_key(where, key))
        return out
    raise EvidenceSchemaError(where, f"{_kind(value)} is not a JSON value (use lists, objects and scalars)")


def _scalar(value: object, hint: type, where: str) -> bool | int | float | str:
    ok = isinstance(value, hint) and not (hint is not bool and isinstance(value, bool))
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        ok, value = True, float(value)
    if hint is float and ok and not math.isfinite(float(value)):  # type: ignore[arg-type]
        raise EvidenceSchemaError(where, f"{value} is not a JSON number")
    if not ok:
        raise EvidenceSchemaError(where, f"expected {_JSON_NAMES[hint]}, got {_kind(value)}")
    return value  # type: ignore[return-value]


def _check_configuration(value: JsonValue, where: str) -> None:
    unsafe = unsafe_configuration_keys(value, where)
    if unsafe:
        raise EvidenceSchemaError(
            unsafe[0],
            "credentials, environment, commands and handlers never go into evidence; "
            "build the snapshot with trialbook.evidence.safe_configuration()",
        )


# -- encoding ---------------------------------------------------------------------------------------


def _encode(value: Any, hint: Any, where: str) -> JsonValue:
    if is_json_value(hint):
        return _json_value(value, where)
    inner = optional_inner(hint)
    if inner is not None:
        return None if value is None else _encode(value, inner, where)
    origin = get_origin(hint)
    if is_literal(hint):
        if not any(type(value) is type(allowed) and value == allowed for allowed in get_args(hint)):
            allowed_list = ", ".join(_show(a) for a in get_args(hint))
            raise EvidenceSchemaError(where, f"{_show(value)} is not one of {allowed_list}")
        return value  # type: ignore[no-any-return]
    if origin is tuple:
        if not isinstance(value, tuple):
            raise EvidenceSchemaError(where, f"expected a tuple, got {_kind(value)}")
        return [_encode(item, get_args(hint)[0], at_index(where, i)) for i, item in enumerate(value)]
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise EvidenceSchemaError(where, f"expected a dict with string keys, got {_kind(value)}")
        return {key: _encode(item, get_args(hint)[1], at_key(where, key)) for key, item in value.items()}
    if hint is bytes:
        if not isinstance(value, bytes):
            raise EvidenceSchemaError(where, f"expected bytes, got {_kind(value)}")
        return base64.b64encode(value).decode("ascii")
    if hint in _JSON_NAMES:
        return _scalar(value, hint, where)
    if is_record(hint):
        return _encode_record(value, hint, where)
    raise TypeError(f"{where}: schema 4.0 has no JSON form for {hint!r}")


def _encode_record(value: Any, hint: type, where: str) -> JsonObject:
    cls: type = type(value)
    out: JsonObject = {}
    if is_result(hint):
        tag = result_tag(cls)
        if tag is None or not issubclass(cls, hint):
            known = ", ".join(c.__name__ for c in RESULT_TYPES.values() if issubclass(c, hint))
            raise EvidenceSchemaError(where, f"{cls.__name__} cannot be saved here; schema 4.0 knows {known}")
        out[RESULT_TYPE_KEY] = tag
    elif cls is not hint:
        raise EvidenceSchemaError(where, f"expected a {hint.__name__}, got {cls.__name__}")
    for name, field_hint in (*field_members(cls), *derived_members(cls)):
        out[name] = _encode(getattr(value, name), field_hint, at_key(where, name))
    if isinstance(value, AgentResult):
        _check_configuration(out["configuration"], at_key(where, "configuration"))
    return out


# -- decoding ---------------------------------------------------------------------------------------


def _decode(data: Any, hint: Any, where: str) -> Any:
    if is_json_value(hint):
        return _json_value(data, where)
    inner = optional_inner(hint)
    if inner is not None:
        return None if data is None else _decode(data, inner, where)
    origin = get_origin(hint)
    if is_literal(hint) or hint in _JSON_NAMES:
        return _encode(data, hint, where)
    if origin is tuple:
        if not isinstance(data, list):
            raise EvidenceSchemaError(where, f"expected an array, got {_kind(data)}")
        return tuple(_decode(item, get_args(hint)[0], at_index(where, i)) for i, item in enumerate(data))
    if origin is dict:
        return {
            key: _decode(item, get_args(hint)[1], at_key(where, key))
            for key, item in _expect_object(data, where).items()
        }
    if hint is bytes:
        if not isinstance(data, str):
            raise EvidenceSchemaError(where, f"expected a base64 string, got {_kind(data)}")
        try:
            return base64.b64decode(data.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise EvidenceSchemaError(where, "not valid base64") from None
    if is_record(hint):
        return _decode_record(_expect_object(data, where), hint, where)
    raise TypeError(f"{where}: schema 4.0 has no JSON form for {hint!r}")


def _expect_object(data: Any, where: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise EvidenceSchemaError(where, f"expected an object, got {_kind(data)}")
    for key in data:
        if not isinstance(key, str):
            raise EvidenceSchemaError(where, f"object key {key!r} is not a string")
    return data


def _record_class(data: dict[str, Any], hint: type, where: str) -> type:
    if not is_result(hint):
        return hint
    if RESULT_TYPE_KEY not in data:
        raise EvidenceSchemaError(where, f"missing field '{RESULT_TYPE_KEY}'")
    tag = data[RESULT_TYPE_KEY]
    cls = RESULT_TYPES.get(tag) if isinstance(tag, str) else None
    if cls is None or not issubclass(cls, hint):
        known = " or ".join(_show(t) for t, c in RESULT_TYPES.items() if issubclass(c, hint))
        raise EvidenceSchemaError(at_key(where, RESULT_TYPE_KEY), f"{_show(tag)} is not {known}")
    return cls


def _decode_record(data: dict[str, Any], hint: type, where: str) -> Any:
    cls = _record_class(data, hint, where)
    keys = json_keys(cls)
    for key in keys:
        if key not in data:
            raise EvidenceSchemaError(where, f"missing field '{key}'")
    for key in data:
        if key not in keys:
            raise EvidenceSchemaError(where, f"unknown field '{key}' (not part of schema {SCHEMA_VERSION})")
    values = {name: _decode(data[name], h, at_key(where, name)) for name, h in field_members(cls)}
    if is_result(cls):
        _check_configuration(values["configuration"], at_key(where, "configuration"))
    record = cls(**values)
    for name, derived_hint in derived_members(cls):
        saved = _decode(data[name], derived_hint, at_key(where, name))
        actual = getattr(record, name)
        if saved != actual:
            raise EvidenceSchemaError(
                at_key(where, name), f"saved {_show(saved)} but the record gives {_show(actual)}"
            )
    return record


# -- public entry points ------------------------------------------------------------------------------


def dump_result(result: AgentResult) -> JsonObject:
    """The schema-4.0 JSON object of one result (a trial's ``result.json``), discriminator included.

    Raises:
        EvidenceSchemaError: a value does not fit its field, or the configuration holds credentials.
    """
    return _encode_record(result, AgentResult, "result")


def load_result(data: object, path: str = "result") -> AgentResult:
    """Load one result object strictly; ``path`` prefixes every error location.

    Raises:
        EvidenceSchemaError: a field is missing, unknown, mistyped or contradicts its derived value.
    """
    return _decode(data, AgentResult, path)  # type: ignore[no-any-return]


def suite_to_json(report: SuiteReport) -> JsonObject:
    """The whole suite as schema-4.0 JSON, ``schema_version`` first.

    Raises:
        EvidenceSchemaError: the report is not schema 4.0, or some value does not fit its field.
    """
    if report.schema_version != SCHEMA_VERSION:
        problem = f'trialbook writes only schema "{SCHEMA_VERSION}", not {_show(report.schema_version)}'
        raise EvidenceSchemaError("schema_version", problem)
    encoded = _encode_record(report, SuiteReport, "")
    return {"schema_version": encoded["schema_version"], **encoded}


def suite_from_json(data: object) -> SuiteReport:
    """Load a suite strictly: the version first, then every record at every level.

    Raises:
        EvidenceSchemaError: the version is not 4.0, or any record is incomplete, unknown or inconsistent.
    """
    obj = _expect_object(data, "")
    if "schema_version" not in obj:
        raise EvidenceSchemaError("", "missing field 'schema_version'")
    version = obj["schema_version"]
    if version != SCHEMA_VERSION:
        raise EvidenceSchemaError(
            "schema_version",
            f"this evidence is schema {_show(version)}, and trialbook reads only schema "
            f'"{SCHEMA_VERSION}"; there is no reader for other layouts: regenerate the evidence with the '
            "current producer (run the suite again) instead of editing the JSON",
        )
    return _decode_record(obj, SuiteReport, "")  # type: ignore[no-any-return]
