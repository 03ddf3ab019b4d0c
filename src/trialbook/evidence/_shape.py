"""The persisted shape of each evidence record, read once from the dataclasses themselves.

The codec and the JSON Schema both walk these shapes, so a field added to a record is saved, loaded and
described without anyone writing per-class code, and the two can never disagree about what a record holds.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

from ._result import AgentResult

__all__ = [
    "RESULT_TYPE_KEY",
    "Member",
    "derived_members",
    "field_members",
    "is_json_value",
    "is_literal",
    "is_record",
    "is_result",
    "json_keys",
    "omitted_when_none",
    "optional_inner",
    "result_tag",
    "result_types",
]

RESULT_TYPE_KEY = "result_type"
"""The discriminator written into every result object so a subclass loads back as itself."""


@cache
def result_types() -> dict[str, type[AgentResult]]:
    """Every result class schema 4.0 knows, by its discriminator value.

    A function rather than a constant so that writing a plain ``AgentResult`` (every local run) does
    not define the Copilot result's classes; reading or describing results of every kind does.
    """
    from ._copilot import CopilotResult

    return {"agent": AgentResult, "copilot": CopilotResult}


Member = tuple[str, Any]
"""A persisted key and the type its value has."""

_JSON_ORIGINS = frozenset({bool, int, float, str, list, dict, type(None)})


def is_record(hint: Any) -> bool:
    """Whether ``hint`` is an evidence record (a dataclass), as opposed to a value type."""
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def is_result(hint: Any) -> bool:
    """Whether ``hint`` is a result class, whose objects carry the ``result_type`` discriminator."""
    return isinstance(hint, type) and issubclass(hint, AgentResult)


def _union_args(hint: Any) -> tuple[Any, ...] | None:
    if get_origin(hint) in (Union, types.UnionType):
        return get_args(hint)
    return None


def is_json_value(hint: Any) -> bool:
    """Whether ``hint`` is the ``JsonValue`` union (free-form JSON rather than a typed record field)."""
    args = _union_args(hint)
    return args is not None and {get_origin(arg) or arg for arg in args} == _JSON_ORIGINS


def optional_inner(hint: Any) -> Any | None:
    """The ``X`` of ``X | None``, or ``None`` when ``hint`` is not such an optional."""
    args = _union_args(hint)
    if args is None or is_json_value(hint):
        return None
    rest = [arg for arg in args if arg is not type(None)]
    if len(rest) != 1 or len(rest) == len(args):
        raise TypeError(f"schema 4.0 has no JSON form for the union {hint!r}")
    return rest[0]


def is_literal(hint: Any) -> bool:
    """Whether ``hint`` is a ``Literal[...]`` of allowed values."""
    return get_origin(hint) is Literal


@cache
def field_members(cls: type) -> tuple[Member, ...]:
    """The dataclass fields of ``cls`` with their resolved types, in declaration order."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


@cache
def derived_members(cls: type) -> tuple[Member, ...]:
    """The properties named in ``cls.DERIVED`` with their return types; written and re-checked on load."""
    members: list[Member] = []
    for name in getattr(cls, "DERIVED", ()):
        prop = getattr(cls, name)
        if not isinstance(prop, property) or prop.fget is None:
            raise TypeError(f"{cls.__name__}.DERIVED names {name!r}, which is not a property")
        members.append((name, typing.get_type_hints(prop.fget)["return"]))
    return tuple(members)


def result_tag(cls: type) -> str | None:
    """The discriminator value of a result class, or ``None`` for a class schema 4.0 does not know."""
    if cls is AgentResult:
        return "agent"
    for tag, known in result_types().items():
        if known is cls:
            return tag
    return None


@cache
def omitted_when_none(cls: type) -> frozenset[str]:
    """The fields of ``cls`` written only when set (``OMITTED_WHEN_NONE``), so files without them still load.

    Schema 4.0 grows by such fields alone: a record that does not use one is written exactly as before.
    """
    names = frozenset(getattr(cls, "OMITTED_WHEN_NONE", ()))
    unknown = names - {name for name, _ in field_members(cls)}
    if unknown:
        raise TypeError(f"{cls.__name__}.OMITTED_WHEN_NONE names {sorted(unknown)}, which are not fields")
    return names


def json_keys(cls: type) -> tuple[str, ...]:
    """Every key a saved ``cls`` object may have, in the order it is written."""
    keys = [name for name, _ in field_members(cls)] + [name for name, _ in derived_members(cls)]
    return (RESULT_TYPE_KEY, *keys) if is_result(cls) else tuple(keys)
