"""Which checks are quick: they read the trial's files and call log and run no command and no user code."""

from __future__ import annotations

from collections.abc import Iterable

from ._base import Assertion
from ._calls import NotRan, Ran, RanInOrder
from ._files import FileContains, FileExists
from ._inputs import Loaded, SkillUsed

__all__ = ["quick_checks"]

_QUICK: frozenset[type] = frozenset({FileContains, FileExists, Loaded, NotRan, Ran, RanInOrder, SkillUsed})


def quick_checks(assertions: Iterable[Assertion]) -> bool:
    """Whether every one of ``assertions`` is a built-in check that cannot block.

    The runner runs such checks on its event loop instead of handing them to a worker thread. The type
    must be exactly a built-in one: a subclass may override ``check`` with anything.
    """
    return all(type(assertion) in _QUICK for assertion in assertions)
