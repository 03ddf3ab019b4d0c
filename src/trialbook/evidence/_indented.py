"""``json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)``, the same text in half the time.

With ``indent`` the standard library leaves its C encoder for a pure-Python one built from nested
generators; every trial's ``result.json`` and ``changes.json`` and each run's ``suite.json`` are
written indented, so people can read them. :func:`dumps_indented` walks the value once with plain
recursion and the C string escaper, for the JSON trialbook writes: ``dict`` with ``str`` keys,
``list``, ``tuple``, ``str``, ``int``, ``float``, ``bool`` and ``None``, each of exactly that type.
Anything else (a subclass, another key type, a value JSON cannot hold, nesting too deep) goes to
``json.dumps`` itself, so the text, and any error, is exactly the standard library's.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # the C escaper where there is one
from typing import Any

__all__ = ["dumps_indented"]

_FLOAT = float.__repr__
_INT = int.__repr__
_INFINITY = float("inf")


class _Unusual(Exception):
    """A value this encoder leaves to ``json.dumps``."""


def dumps_indented(value: Any) -> str:
    """``value`` as ``json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)`` writes it."""
    out: list[str] = []
    try:
        _encode(value, "", out.append)
    except (_Unusual, RecursionError):
        return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
    return "".join(out)


def _encode(value: Any, pad: str, write: Any) -> None:
    kind = type(value)
    if kind is str:
        write(encode_basestring(value))
    elif value is None:
        write("null")
    elif value is True:
        write("true")
    elif value is False:
        write("false")
    elif kind is int:
        write(_INT(value))
    elif kind is float:
        if value != value or value in (_INFINITY, -_INFINITY):
            raise _Unusual  # json.dumps raises its own ValueError for it
        write(_FLOAT(value))
    elif kind is dict:
        if not value:
            write("{}")
            return
        inner = pad + "  "
        opening = "{\n" + inner
        between = ",\n" + inner
        for key, item in value.items():
            if type(key) is not str:
                raise _Unusual  # json.dumps turns numbers and None into keys, or refuses the key
            write(opening + encode_basestring(key) + ": ")
            opening = between
            _encode(item, inner, write)
        write("\n" + pad + "}")
    elif kind is list or kind is tuple:
        if not value:
            write("[]")
            return
        inner = pad + "  "
        opening = "[\n" + inner
        between = ",\n" + inner
        for item in value:
            write(opening)
            opening = between
            _encode(item, inner, write)
        write("\n" + pad + "]")
    else:
        raise _Unusual
