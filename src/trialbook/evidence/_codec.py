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
import weakref
from functools import cache
from typing import Any, get_args, get_origin

from ._errors import EvidenceSchemaError, at_index, at_key
from ._json import JsonObject, JsonValue
from ._report import SCHEMA_VERSION, SuiteReport, TestReport
from ._result import AgentResult
from ._shape import (
    RESULT_TYPE_KEY,
    derived_members,
    field_members,
    is_json_value,
    is_literal,
    is_record,
    is_result,
    json_keys,
    omitted_when_none,
    optional_inner,
    result_tag,
    result_types,
)
from ._values import JSON_NAMES, check_configuration, expect_object, json_value, kind, scalar, show

__all__ = ["dump_result", "dump_test", "load_result", "load_test", "suite_from_json", "suite_to_json"]

# -- encoding ---------------------------------------------------------------------------------------


@cache
def _plan(hint: Any) -> tuple[str, Any]:
    """What kind of field ``hint`` is and the type inside it, worked out once per type.

    Every trial's ``result.json`` and every trial in ``suite.json`` walks the same few dozen field types;
    asking :mod:`typing` about each one again for every value cost more than the encoding itself.
    """
    if is_json_value(hint):
        return "json", None
    inner = optional_inner(hint)
    if inner is not None:
        return "optional", inner
    if is_literal(hint):
        return "literal", get_args(hint)
    origin = get_origin(hint)
    if origin is tuple:
        return "tuple", get_args(hint)[0]
    if origin is dict:
        return "dict", get_args(hint)[1]
    if hint is bytes:
        return "bytes", None
    if hint in JSON_NAMES:
        return "scalar", None
    if is_record(hint):
        return "record", None
    return "unknown", None


Where = str | tuple["Where", str | int]
"""A location in the JSON being written: a path, or a parent location and a key or index inside it.

Only an error shows a location, and a result is written with fifty of them: the path is spelled out
(:func:`_located`) when a value is refused, not built for every value on the way down."""


def _located(where: Where) -> str:
    """``where`` spelled out as error messages show it, e.g. ``result.turns[1].content``."""
    parts: list[str | int] = []
    while isinstance(where, tuple):
        where, part = where
        parts.append(part)
    location = where
    for part in reversed(parts):
        location = at_index(location, part) if isinstance(part, int) else at_key(location, part)
    return location


_Node = tuple[str, Any, Any]
"""A field type worked out for encoding: its kind (see :func:`_plan`), what is inside it, the type."""


@cache
def _node(hint: Any) -> _Node:
    """``hint`` with every type inside it worked out too, so encoding a value asks :mod:`typing` nothing."""
    how, inner = _plan(hint)
    if how in ("optional", "tuple", "dict"):
        return how, _node(inner), hint
    return how, inner, hint


@cache
def _members(cls: type) -> tuple[tuple[str, _Node], ...]:
    """The fields and the derived members a record of ``cls`` is written with, in order, types worked out."""
    return tuple((name, _node(hint)) for name, hint in (*field_members(cls), *derived_members(cls)))


def _encode(value: Any, hint: Any, where: str) -> JsonValue:
    return _encode_node(value, _node(hint), where)


def _encode_node(value: Any, node: _Node, where: Where) -> JsonValue:
    how, inner, hint = node
    if how == "scalar":
        if type(value) is hint and hint is not float:  # exactly a str, int or bool: nothing to check
            return value  # type: ignore[no-any-return]
        return scalar(value, hint, _located(where))
    if how == "optional":
        return None if value is None else _encode_node(value, inner, where)
    if how == "record":
        return _encode_record(value, hint, where)
    if how == "tuple":
        if not isinstance(value, tuple):
            raise EvidenceSchemaError(_located(where), f"expected a tuple, got {kind(value)}")
        return [_encode_node(item, inner, (where, i)) for i, item in enumerate(value)]
    if how == "json":
        return json_value(value, _located(where))
    if how == "literal":
        if not any(type(value) is type(allowed) and value == allowed for allowed in inner):
            allowed_list = ", ".join(show(a) for a in inner)
            raise EvidenceSchemaError(_located(where), f"{show(value)} is not one of {allowed_list}")
        return value  # type: ignore[no-any-return]
    if how == "dict":
        if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
            raise EvidenceSchemaError(_located(where), f"expected a dict with string keys, got {kind(value)}")
        return {key: _encode_node(item, inner, (where, key)) for key, item in value.items()}
    if how == "bytes":
        if not isinstance(value, bytes):
            raise EvidenceSchemaError(_located(where), f"expected bytes, got {kind(value)}")
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{_located(where)}: schema 4.0 has no JSON form for {hint!r}")


_ENCODED: dict[int, tuple[weakref.ref[Any], JsonObject]] = {}
"""Results encoded by :func:`dump_result`, by identity, while they live (see :func:`_encoded`)."""


def _encoded(value: Any, hint: type) -> JsonObject | None:
    """The JSON :func:`dump_result` made of this very result, if any: encoded again it is the same.

    A result is frozen; a trial's is encoded for its ``result.json`` and again inside ``suite.json``.
    """
    known = _ENCODED.get(id(value))
    if known is None or known[0]() is not value or not isinstance(value, hint):
        return None
    return dict(known[1])


def _remember(value: Any, encoded: JsonObject) -> None:
    key = id(value)
    try:
        ref = weakref.ref(value, lambda _: _ENCODED.pop(key, None))
    except TypeError:  # a result class without weak references: encoded again, as before
        return
    _ENCODED[key] = (ref, encoded)


def _encode_record(value: Any, hint: type, where: Where) -> JsonObject:
    cls: type = type(value)
    out: JsonObject = {}
    if is_result(hint):
        cached = _encoded(value, hint)
        if cached is not None:
            return cached
        tag = result_tag(cls)
        if tag is None or not issubclass(cls, hint):
            known = ", ".join(c.__name__ for c in result_types().values() if issubclass(c, hint))
            raise EvidenceSchemaError(
                _located(where), f"{cls.__name__} cannot be saved here; schema 4.0 knows {known}"
            )
        out[RESULT_TYPE_KEY] = tag
    elif cls is not hint:
        raise EvidenceSchemaError(_located(where), f"expected a {hint.__name__}, got {cls.__name__}")
    _refuse_impossible(value, where)
    omitted = omitted_when_none(cls)
    for name, node in _members(cls):
        member = getattr(value, name)
        if member is None and name in omitted:
            continue
        out[name] = _encode_node(member, node, (where, name))
    if isinstance(value, AgentResult) and out["configuration"] is not None:
        check_configuration(out["configuration"], _located((where, "configuration")))
    return out


def _refuse_impossible(record: Any, where: Where) -> None:
    """A record whose values cannot be real (see each class's ``impossible``) is never written or read."""
    check = getattr(record, "impossible", None)
    if callable(check):
        for name, problem in check():
            raise EvidenceSchemaError(_located((where, name)), problem)


# -- decoding ---------------------------------------------------------------------------------------


def _decode(data: Any, hint: Any, where: str) -> Any:
    if is_json_value(hint):
        return json_value(data, where)
    inner = optional_inner(hint)
    if inner is not None:
        return None if data is None else _decode(data, inner, where)
    origin = get_origin(hint)
    if is_literal(hint) or hint in JSON_NAMES:
        return _encode(data, hint, where)
    if origin is tuple:
        if not isinstance(data, list):
            raise EvidenceSchemaError(where, f"expected an array, got {kind(data)}")
        return tuple(_decode(item, get_args(hint)[0], at_index(where, i)) for i, item in enumerate(data))
    if origin is dict:
        return {
            key: _decode(item, get_args(hint)[1], at_key(where, key))
            for key, item in expect_object(data, where).items()
        }
    if hint is bytes:
        if not isinstance(data, str):
            raise EvidenceSchemaError(where, f"expected a base64 string, got {kind(data)}")
        try:
            return base64.b64decode(data.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError):
            raise EvidenceSchemaError(where, "not valid base64") from None
    if is_record(hint):
        return _decode_record(expect_object(data, where), hint, where)
    raise TypeError(f"{where}: schema 4.0 has no JSON form for {hint!r}")


def _record_class(data: dict[str, Any], hint: type, where: str) -> type:
    if not is_result(hint):
        return hint
    if RESULT_TYPE_KEY not in data:
        raise EvidenceSchemaError(where, f"missing field '{RESULT_TYPE_KEY}'")
    tag = data[RESULT_TYPE_KEY]
    cls = result_types().get(tag) if isinstance(tag, str) else None
    if cls is None or not issubclass(cls, hint):
        known = " or ".join(show(t) for t, c in result_types().items() if issubclass(c, hint))
        raise EvidenceSchemaError(at_key(where, RESULT_TYPE_KEY), f"{show(tag)} is not {known}")
    return cls


def _decode_record(data: dict[str, Any], hint: type, where: str) -> Any:
    cls = _record_class(data, hint, where)
    keys = json_keys(cls)
    omitted = omitted_when_none(cls)
    for key in keys:
        if key not in data and key not in omitted:
            raise EvidenceSchemaError(where, f"missing field '{key}'")
    for key in data:
        if key not in keys:
            raise EvidenceSchemaError(where, f"unknown field '{key}' (not part of schema {SCHEMA_VERSION})")
    values = {
        name: _decode(data[name], h, at_key(where, name)) for name, h in field_members(cls) if name in data
    }
    if is_result(cls):
        check_configuration(values["configuration"], at_key(where, "configuration"))
    record = cls(**values)
    _refuse_impossible(record, where)
    for name, derived_hint in derived_members(cls):
        saved = _decode(data[name], derived_hint, at_key(where, name))
        actual = getattr(record, name)
        if saved != actual:
            raise EvidenceSchemaError(
                at_key(where, name), f"saved {show(saved)} but the record gives {show(actual)}"
            )
    return record


# -- public entry points ------------------------------------------------------------------------------


def dump_result(result: AgentResult) -> JsonObject:
    """The schema-4.0 JSON object of one result (a trial's ``result.json``), discriminator included.

    Raises:
        EvidenceSchemaError: a value does not fit its field, or the configuration holds credentials.
    """
    encoded = _encode_record(result, AgentResult, "result")
    _remember(result, encoded)
    return encoded


def load_result(data: object, path: str = "result") -> AgentResult:
    """Load one result object strictly; ``path`` prefixes every error location.

    Raises:
        EvidenceSchemaError: a field is missing, unknown, mistyped or contradicts its derived value.
    """
    return _decode(data, AgentResult, path)  # type: ignore[no-any-return]


def dump_test(test: TestReport) -> JsonObject:
    """One test's schema-4.0 JSON object, as it appears in a suite's ``tests`` array.

    The pytest plugin encodes each test as it finishes, so a value JSON cannot hold is reported against
    that test (and, under xdist, the record travels to the controller as soon as it is complete).

    Raises:
        EvidenceSchemaError: a value does not fit its field, or a configuration holds credentials.
    """
    return _encode_record(test, TestReport, f"tests[{test.id!r}]")


def load_test(data: object, path: str = "test") -> TestReport:
    """Load one test object strictly; ``path`` prefixes every error location.

    Raises:
        EvidenceSchemaError: a field is missing, unknown, mistyped or contradicts its derived value.
    """
    return _decode(data, TestReport, path)  # type: ignore[no-any-return]


def suite_to_json(report: SuiteReport) -> JsonObject:
    """The whole suite as schema-4.0 JSON, ``schema_version`` first.

    Raises:
        EvidenceSchemaError: the report is not schema 4.0, or some value does not fit its field.
    """
    if report.schema_version != SCHEMA_VERSION:
        problem = f'trialbook writes only schema "{SCHEMA_VERSION}", not {show(report.schema_version)}'
        raise EvidenceSchemaError("schema_version", problem)
    encoded = _encode_record(report, SuiteReport, "")
    return {"schema_version": encoded["schema_version"], **encoded}


def suite_from_json(data: object) -> SuiteReport:
    """Load a suite strictly: the version first, then every record at every level.

    Raises:
        EvidenceSchemaError: the version is not 4.0, or any record is incomplete, unknown or inconsistent.
    """
    obj = expect_object(data, "")
    if "schema_version" not in obj:
        raise EvidenceSchemaError("", "missing field 'schema_version'")
    version = obj["schema_version"]
    if version != SCHEMA_VERSION:
        raise EvidenceSchemaError(
            "schema_version",
            f"this evidence is schema {show(version)}, and trialbook reads only schema "
            f'"{SCHEMA_VERSION}"; there is no reader for other layouts: regenerate the evidence with the '
            "current producer (run the suite again) instead of editing the JSON",
        )
    return _decode_record(obj, SuiteReport, "")  # type: ignore[no-any-return]
