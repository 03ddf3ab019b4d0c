"""Configuration snapshots that are safe to publish: settings yes, credentials and handlers never.

Evidence files end up as CI artifacts and in pull-request comments, so an agent's settings are copied
through an allow-by-default filter that drops anything named like a credential, an environment, a command
line or a callback, and anything that is not plain JSON. The codec refuses a snapshot that skipped it.

Redaction is keyed by location, not only by name: a custom tool's ``parameters`` (``tools[i].parameters``
at the top of a snapshot) is the JSON Schema the model was shown, so it is kept as advertised. Its
property names (``command``, ``env``, ``auth_mode``) describe structure, not credentials, and removing them
while ``required`` still lists them would record a schema no model ever saw.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from ._errors import at_index, at_key
from ._json import JsonObject, JsonValue

__all__ = ["is_sensitive_key", "safe_configuration", "unsafe_configuration_keys"]

_SENSITIVE_WORDS = frozenset(
    {
        "args",
        "argv",
        "auth",
        "authorization",
        "cmd",
        "command",
        "commands",
        "cookie",
        "cookies",
        "credential",
        "credentials",
        "env",
        "environ",
        "environment",
        "handler",
        "handlers",
        "header",
        "headers",
        "passwd",
        "password",
        "secret",
        "secrets",
        "token",
    }
)
# Matched inside the key with separators removed, so "apiKey", "api-key" and "x_api_key" all count.
_SENSITIVE_PARTS = ("apikey", "accesskey", "privatekey", "secretkey", "password", "passwd", "secret")
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def is_sensitive_key(key: str) -> bool:
    """Whether a settings key names a credential, environment, command line or handler.

    ``token`` counts as a word (``token``, ``GH_TOKEN``, ``authToken``) but ``max_tokens`` does not: a
    token count is a setting worth keeping.
    """
    words = [word.lower() for word in _WORD.findall(key)]
    compact = "".join(words)
    return (
        any(word in _SENSITIVE_WORDS for word in words)
        or any(part in compact for part in _SENSITIVE_PARTS)
        or compact.endswith("token")
    )


_SCHEMA_PATH = re.compile(r"^tools\[\d+\]\.parameters$")


def is_schema_location(path: str) -> bool:
    """Whether ``path`` (as :func:`at_key`/:func:`at_index` spell it) holds an advertised tool schema."""
    return _SCHEMA_PATH.match(path) is not None


def _clean(value: Any, path: str, by_name: bool) -> tuple[bool, JsonValue]:
    """``(True, json)`` for a value that can be kept, ``(False, None)`` for one that must be dropped."""
    if value is None or isinstance(value, bool | str | int):
        return True, value
    if isinstance(value, float):
        return (True, value) if math.isfinite(value) else (False, None)
    if isinstance(value, Mapping):
        return True, _clean_mapping(value, path, by_name and not is_schema_location(path))
    if isinstance(value, list | tuple):
        items: list[JsonValue] = []
        for index, item in enumerate(value):
            keep, cleaned = _clean(item, at_index(path, index), by_name)
            if keep:
                items.append(cleaned)
        return True, items
    return False, None


def _clean_mapping(mapping: Mapping[Any, Any], path: str, by_name: bool) -> JsonObject:
    out: JsonObject = {}
    for key, value in mapping.items():
        if not isinstance(key, str) or (by_name and is_sensitive_key(key)):
            continue
        keep, cleaned = _clean(value, at_key(path, key), by_name)
        if keep:
            out[key] = cleaned
    return out


def safe_configuration(mapping: Mapping[Any, Any]) -> JsonObject:
    """A JSON copy of an agent's settings without credentials, environment, commands or handlers.

    Keys are dropped at every depth (inside nested mappings and mappings held in lists), matching is
    case-insensitive, and values that are not plain JSON (callables, objects, sets, bytes, NaN) are
    dropped rather than turned into strings. Tuples become lists. Tool schemas
    (:func:`is_schema_location`) keep every property name.
    """
    return _clean_mapping(mapping, "", True)


def unsafe_configuration_keys(value: JsonValue, path: str = "") -> list[str]:
    """The locations of every sensitive key in a snapshot, so a refusal can name each one.

    ``path`` prefixes the reported locations; tool schemas are recognised relative to the snapshot.
    """
    return _unsafe(value, path, "")


def _unsafe(value: JsonValue, path: str, inside: str) -> list[str]:
    found: list[str] = []
    if is_schema_location(inside):
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            if is_sensitive_key(key):
                found.append(at_key(path, key))
            else:
                found.extend(_unsafe(item, at_key(path, key), at_key(inside, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_unsafe(item, at_index(path, index), at_index(inside, index)))
    return found
