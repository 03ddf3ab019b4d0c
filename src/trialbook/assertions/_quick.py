"""Which checks are quick: they read the trial's files and call log and run no command and no user code."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from ._base import Assertion

__all__ = ["quick_checks"]

_QUICK = {
    f"{__package__}._calls": frozenset({"NotRan", "Ran", "RanInOrder"}),
    f"{__package__}._files": frozenset({"FileContains", "FileExists"}),
    f"{__package__}._inputs": frozenset({"Loaded", "SkillUsed"}),
    f"{__package__}._outside": frozenset({"NoOutsideWrites"}),
}
"""The quick classes by module and name, not imported here: a run loads only the kinds its evals use."""


def _quick(cls: type) -> bool:
    names = _QUICK.get(cls.__module__)
    if names is None or cls.__qualname__ not in names:
        return False
    return getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is cls  # that class exactly


def quick_checks(assertions: Iterable[Assertion]) -> bool:
    """Whether every one of ``assertions`` is a built-in check that cannot block.

    The runner runs such checks on its event loop instead of handing them to a worker thread. The type
    must be exactly a built-in one: a subclass may override ``check`` with anything.
    """
    return all(_quick(type(assertion)) for assertion in assertions)
