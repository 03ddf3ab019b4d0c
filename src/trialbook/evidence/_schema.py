"""The JSON Schema (draft 2020-12) of schema-4.0 evidence, generated from the same shapes the codec uses.

The committed ``schema-4.0.json`` beside this module is this generator's output; a test fails when the two
drift. ``python -m trialbook.evidence._jsonschema`` prints it (see that module).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, cast, get_args, get_origin

from ._json import JsonObject, JsonValue
from ._report import SCHEMA_VERSION, SuiteReport
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

__all__ = ["render_schema", "suite_json_schema"]

_SCALARS: dict[Any, JsonObject] = {
    bool: {"type": "boolean"},
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bytes: {"type": "string", "contentEncoding": "base64"},
}
_ANY_JSON: JsonObject = {
    "description": "Free-form JSON, kept exactly as captured.",
    "type": ["null", "boolean", "number", "string", "array", "object"],
}


def _summary(obj: object) -> str:
    """The first paragraph of a docstring, on one line."""
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split())


def _ref(name: str) -> JsonObject:
    return {"$ref": f"#/$defs/{name}"}


def _type_schema(hint: Any, defs: JsonObject) -> JsonObject:
    if is_json_value(hint):
        defs.setdefault("JsonValue", _ANY_JSON)
        return _ref("JsonValue")
    inner = optional_inner(hint)
    if inner is not None:
        return {"anyOf": [_type_schema(inner, defs), {"type": "null"}]}
    if is_literal(hint):
        allowed: list[JsonValue] = list(get_args(hint))
        return {"enum": allowed}
    origin = get_origin(hint)
    if origin is tuple:
        return {"type": "array", "items": _type_schema(get_args(hint)[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(get_args(hint)[1], defs)}
    if hint in _SCALARS:
        return dict(_SCALARS[hint])
    if is_record(hint):
        if is_result(hint):
            choices = [cls for cls in result_types().values() if issubclass(cls, hint)]
            for cls in choices:
                _define(cls, defs)
            refs: list[JsonValue] = [_ref(cls.__name__) for cls in choices]
            return refs[0] if len(refs) == 1 else {"oneOf": refs}  # type: ignore[return-value]
        _define(hint, defs)
        return _ref(hint.__name__)
    raise TypeError(f"schema {SCHEMA_VERSION} has no JSON form for {hint!r}")


def _record_body(cls: type, defs: JsonObject) -> JsonObject:
    properties: JsonObject = {}
    if is_result(cls):
        properties[RESULT_TYPE_KEY] = {
            "description": "Which result class this object is, so it loads back as the same class.",
            "const": result_tag(cls),
        }
    for name, hint in field_members(cls):
        properties[name] = _type_schema(hint, defs)
    for name, hint in derived_members(cls):
        derived = _type_schema(hint, defs)
        note = "Derived: recomputed from the record on load and must equal the saved value."
        properties[name] = {"description": f"{_summary(getattr(cls, name))} {note}", **derived}
    omitted = omitted_when_none(cls)
    required: list[JsonValue] = [key for key in json_keys(cls) if key not in omitted]
    return {
        "type": "object",
        "description": _summary(cls),
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _define(cls: type, defs: JsonObject) -> None:
    if cls.__name__ in defs:
        return
    defs[cls.__name__] = {}  # reserve the name first: results nest results
    defs[cls.__name__] = _record_body(cls, defs)


def suite_json_schema() -> JsonObject:
    """The JSON Schema a saved ``suite.json`` matches; the strict loader checks more (derived values)."""
    defs: JsonObject = {}
    body = _record_body(SuiteReport, defs)
    properties = cast(JsonObject, body["properties"])
    properties["schema_version"] = {"const": SCHEMA_VERSION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"trialbook evidence, schema {SCHEMA_VERSION}",
        **body,
        "$defs": dict(sorted(defs.items())),
    }


def render_schema() -> str:
    """The schema exactly as committed: two-space indent, trailing newline."""
    return json.dumps(suite_json_schema(), indent=2, ensure_ascii=False) + "\n"
