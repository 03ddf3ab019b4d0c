"""``define_eval``: eval files written in Python, for checks that need code.

``define_eval`` only records its arguments and where it was called; the same reader as for YAML checks
them when the file is loaded, so both kinds of eval file accept the same keys and report the same errors.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType, ModuleType

__all__ = ["EvalDefinition", "collect_definitions", "define_eval", "loading"]

_LOADING: list[Path] = []
"""The ``*.eval.py`` files being imported right now, innermost last."""

PYTHON_NAMES = {"assert_": "assert"}
"""Python spellings of YAML keys that are Python keywords."""


@dataclass(frozen=True)
class EvalDefinition:
    """What a ``define_eval`` call said, and where: the file and line errors will point at."""

    fields: Mapping[str, object] = field(repr=False)
    file: Path | None
    line: int


def define_eval(**fields: object) -> EvalDefinition:
    """Define an eval in a ``*.eval.py`` file; keywords are the YAML keys (``assert`` is ``assert_``).

    Assign the result at module level (or list it in ``EVALS``). Assertions may be assertion objects
    (``ran(...)``, ``assert_that(name, function)``) and agents may be names, mappings or ``AgentSpec``.
    Nothing is checked here: loading the file checks every field and reports all problems at once.
    """
    caller = sys._getframe(1)
    frame: FrameType | None = caller
    target = _LOADING[-1] if _LOADING else None
    # A helper that calls define_eval for the user must not hide the line in the eval file itself.
    while target is not None and frame is not None and Path(frame.f_code.co_filename) != target:
        frame = frame.f_back
    chosen = frame if frame is not None else caller
    named = {PYTHON_NAMES.get(key, key): value for key, value in fields.items()}
    return EvalDefinition(named, Path(chosen.f_code.co_filename), chosen.f_lineno)


@contextmanager
def loading(path: Path) -> Iterator[None]:
    """Mark ``path`` as the eval file being imported, for the lines ``define_eval`` records."""
    _LOADING.append(path)
    try:
        yield
    finally:
        _LOADING.pop()


def collect_definitions(module: ModuleType) -> list[EvalDefinition]:
    """Every ``EvalDefinition`` assigned at module level or listed in ``EVAL``/``EVALS``, each once."""
    found: dict[int, EvalDefinition] = {}
    candidates: list[object] = list(vars(module).values())
    listed = getattr(module, "EVALS", ())
    if isinstance(listed, list | tuple):
        candidates.extend(listed)
    for value in candidates:
        if isinstance(value, EvalDefinition):
            found.setdefault(id(value), value)
    return list(found.values())
