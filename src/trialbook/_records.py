"""Equality, hashing and ``repr`` for trialbook's dataclasses, written once instead of generated per class.

On Python 3.11 ``dataclasses`` compiles every method it generates with an ``exec`` of its own. A one-trial
``trialbook eval`` defines some 75 dataclasses before its first trial, and their ``__eq__``, ``__hash__``
and ``__repr__`` were about half of that cost, though a run calls none of them (tests, ``==`` on outcomes
and error messages do). A class declared ``@dataclass(frozen=True, eq=False, repr=False)`` on
:class:`FrozenRecord`, or ``@dataclass(eq=False, repr=False)`` on :class:`Record`, gets the three from
here, with what ``dataclasses`` generates on Python 3.11 for the same fields:

- ``==`` compares the fields declared with ``compare=True`` as a tuple, only against an instance of the
  very same class (``NotImplemented`` otherwise);
- a frozen record hashes the tuple of its fields with ``hash=True``, or ``compare=True`` where ``hash`` is
  left ``None``; a mutable one is unhashable, as a dataclass with ``eq=True`` is;
- ``repr`` is ``Name(field=value, ...)`` over the fields with ``repr=True``, ``...`` for a record met again
  inside its own ``repr``.

A class that forgets ``eq=False, repr=False`` still gets ``dataclasses``' own methods, which behave the
same, so the mistake costs start-up time, never correctness (tests/test_records.py checks both).
"""

from __future__ import annotations

import reprlib
from dataclasses import fields
from typing import Any

__all__ = ["FrozenRecord", "Record"]


_Names = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]

_NAMES: dict[type, _Names] = {}
"""Each record class's field names, worked out on its first ``==``, hash or ``repr``."""


def _names(cls: type) -> _Names:
    """The fields ``cls`` compares, hashes and shows, in declaration order, chosen as ``dataclasses`` does."""
    names = _NAMES.get(cls)
    if names is None:
        declared = fields(cls)
        names = _NAMES[cls] = (
            tuple(f.name for f in declared if f.compare),
            tuple(f.name for f in declared if (f.compare if f.hash is None else f.hash)),
            tuple(f.name for f in declared if f.repr),
        )
    return names


def _values(record: object, names: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(getattr(record, name) for name in names)


class Record:
    """A mutable dataclass's ``==`` and ``repr`` (and no hash): ``@dataclass(eq=False, repr=False)``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            names = _names(self.__class__)[0]
            return _values(self, names) == _values(other, names)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(self.__class__)[2])
        return f"{self.__class__.__qualname__}({shown})"


class FrozenRecord(Record):
    """A frozen dataclass's ``==``, hash and ``repr``: ``@dataclass(frozen=True, eq=False, repr=False)``."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(_values(self, _names(self.__class__)[1]))
