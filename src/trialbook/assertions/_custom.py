"""``assert_that``: the user's own check, a Python callable over the finished trial."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from .._util.hashing import tagged_sha256
from ..evidence import AssertionRecord, JsonObject
from ._base import make_label
from ._trial import FinishedTrial

__all__ = ["EVAL_MODULE_PREFIX", "AssertThat", "CheckFunction", "assert_that", "callable_reference"]

EVAL_MODULE_PREFIX = "_trialbook_eval_"
"""Start of the module name a ``*.eval.py`` file is imported under (unique per path, never shown)."""

CheckFunction = Callable[[FinishedTrial], bool | None]
"""``check(trial)``: returning ``True`` or ``None`` passes; ``False`` or an ``AssertionError`` fails."""


def callable_reference(fn: Callable[..., object]) -> tuple[str, str | None]:
    """``module:qualname`` of ``fn`` and a hash of its source, or ``None`` when the source is not available.

    The source hash puts the check's code into the cache key: editing a check re-runs the evals using it.
    """
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn) else type(fn)
    module = getattr(target, "__module__", None) or "?"
    if module.startswith(EVAL_MODULE_PREFIX):
        # Name a check in an eval file after the file the user wrote, not the internal module name; the
        # file name (not its path) keeps the cache key the same wherever the repository is checked out.
        source_file = getattr(sys.modules.get(module), "__file__", None)
        module = Path(source_file).name if source_file else module
    qualname = getattr(target, "__qualname__", None) or repr(target)
    try:
        source: str | None = inspect.getsource(target)
    except (OSError, TypeError):
        source = None
    digest = None if source is None else tagged_sha256(source.encode("utf-8"))
    return f"{module}:{qualname}", digest


@dataclass(frozen=True)
class AssertThat:
    """A named custom check. ``reference`` and ``source_sha256`` identify its code for the cache key."""

    name: str
    fn: CheckFunction = field(compare=False)
    reference: str
    source_sha256: str | None
    kind: ClassVar[str] = "assert_that"

    @property
    def label(self) -> str:
        """``assert_that "<name>"``."""
        return make_label(self.kind, self.name)

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Run the check; an exception other than ``AssertionError`` is a broken check, not a verdict."""
        expected = f"{self.reference} passes"
        try:
            # Typed as object: user code may return anything, and that case needs a clear message.
            outcome: object = self.fn(trial)
        except AssertionError as exc:
            message = str(exc) or "the check failed (an AssertionError without a message)"
            return AssertionRecord(self.kind, self.label, False, expected, message)
        except Exception as exc:
            actual = "the check raised an exception"
            return AssertionRecord(
                self.kind, self.label, False, expected, actual, f"{type(exc).__name__}: {exc}"
            )
        if outcome is None or outcome is True:
            return AssertionRecord(self.kind, self.label, True, expected, "the check passed")
        if outcome is False:
            return AssertionRecord(self.kind, self.label, False, expected, "the check returned False")
        if inspect.iscoroutine(outcome):
            outcome.close()
            error = "the check is async; write it as a plain function (def, not async def)"
        else:
            error = f"the check returned {outcome!r}; return True, False or None"
        return AssertionRecord(self.kind, self.label, False, expected, "the check could not decide", error)

    def to_json(self) -> JsonObject:
        """Name, callable reference and source hash."""
        return {
            "kind": self.kind,
            "name": self.name,
            "check": self.reference,
            "source_sha256": self.source_sha256,
        }


def assert_that(name: str, check: CheckFunction) -> AssertThat:
    """Your own check: ``check(trial)`` sees the calls, the files, the agent's result and can run commands.

    Raises:
        ValueError: ``name`` is empty or ``check`` is not callable.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError("assert_that needs a name that reports can show, e.g. 'has-readme'")
    if not callable(check):
        raise ValueError(f"the check of assert_that {name!r} must be callable, not {type(check).__name__}")
    reference, digest = callable_reference(check)
    return AssertThat(name, check, reference, digest)
