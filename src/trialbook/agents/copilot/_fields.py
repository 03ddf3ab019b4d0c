"""Tolerant readers for the fields of Copilot SDK events.

Event payloads are untyped JSON that changes between CLI versions, so every reader answers ``None`` (or an
empty container) for a field that is missing or has the wrong type instead of failing the whole mapping;
the mapper then records the gap rather than guessing a value.
"""

from __future__ import annotations

import json

from ...evidence import JsonObject, JsonValue

__all__ = ["as_list", "as_obj", "canonical", "get_int", "get_num", "get_str"]


def as_obj(value: JsonValue) -> JsonObject:
    """``value`` if it is an object, else an empty one, so nested lookups need no type checks."""
    return value if isinstance(value, dict) else {}


def as_list(value: JsonValue) -> list[JsonValue]:
    """``value`` if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def get_str(data: JsonObject, key: str) -> str | None:
    """The string under ``key``; anything else is unknown."""
    value = data.get(key)
    return value if isinstance(value, str) else None


def get_int(data: JsonObject, key: str) -> int | None:
    """The number under ``key`` as an int; booleans are not counts."""
    value = data.get(key)
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def get_num(data: JsonObject, key: str) -> float | None:
    """The number under ``key`` as a float; booleans are not amounts."""
    value = data.get(key)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def canonical(value: JsonValue) -> str:
    """One text per JSON value regardless of key order, so repeats and conflicts can be told apart."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
