"""Errors of the evidence codec: a file that does not match schema 4.0, and a save that did not land."""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import ClassVar

from ..errors import ExitCode, TrialbookError

__all__ = ["EvidenceError", "EvidenceSchemaError", "EvidenceWriteError", "at_index", "at_key"]

_ROOT = "(top level)"
_PLAIN_KEY = r"[A-Za-z_][A-Za-z0-9_]*"  # compiled (and cached by ``re``) for the first error


@lru_cache(maxsize=4096)
def _key_part(key: str) -> tuple[str, str]:
    # The same few dozen field names come by for every record the codec writes; quote each once.
    if re.fullmatch(_PLAIN_KEY, key):
        return ".", key
    return "", f"[{json.dumps(key, ensure_ascii=False)}]"


def at_key(location: str, key: str) -> str:
    """Where ``key`` sits inside the object at ``location``; odd keys are quoted so paths stay readable."""
    dot, part = _key_part(key)
    return f"{location}{dot}{part}" if location else part


def at_index(location: str, index: int) -> str:
    """The location of item ``index`` of the array at ``location``."""
    return f"{location}[{index}]"


class EvidenceError(TrialbookError):
    """Base of every evidence read or write problem, so a front end can catch them together."""


class EvidenceSchemaError(EvidenceError):
    """Evidence does not match schema 4.0, on load or on save.

    The message leads with the JSON location (``tests[2].executions[0].result.usage[1]``) so the reader
    goes straight to the broken record; when the evidence came from a file, the file name comes first.

    Args:
        location: where in the JSON the problem is; ``""`` for the top level.
        problem: what is wrong there, and the fix when there is one.
        file: the file the evidence was read from or was going to, when there is one.
    """

    def __init__(self, location: str, problem: str, *, file: str | None = None) -> None:
        self.location = location
        self.problem = problem
        self.file = file
        where = location or _ROOT
        prefix = f"{file}: " if file else ""
        super().__init__(f"{prefix}{where}: {problem}")

    def in_file(self, file: str) -> EvidenceSchemaError:
        """The same problem, now naming the file it was found in."""
        return EvidenceSchemaError(self.location, self.problem, file=file)


class EvidenceWriteError(EvidenceError):
    """Evidence could not be published; any earlier file at that path is unchanged.

    A run whose evidence did not land must not look like a success, so this maps to the failure exit code
    rather than to bad input.
    """

    exit_code: ClassVar[int] = ExitCode.FAILED
