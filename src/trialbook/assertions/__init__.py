"""Checks over a finished trial: what the agent ran, the files it left, commands that must succeed.

Each assertion is a small frozen value: ``check(trial)`` decides and explains, ``to_json()`` describes it
for the cache key. Eval files write them as YAML (``- ran: "neon deploy"``); Python eval files and pytest
tests call the constructors below.
"""

from __future__ import annotations

from ..evidence import Call, CommandOutcome
from ._base import Assertion, CheckProgress, evaluate_all
from ._calls import NotRan, Ran, RanInOrder, not_ran, ran, ran_in_order
from ._commands import DEFAULT_SUCCEEDS_TIMEOUT_S, Succeeds, succeeds
from ._custom import AssertThat, CheckFunction, assert_that
from ._files import FileContains, FileExists, file_contains, file_exists
from ._inputs import Loaded, SkillUsed, loaded, skill_used
from ._pattern import Pattern, PatternLike
from ._quick import quick_checks
from ._trial import FinishedTrial
from ._triggered import Triggered, trigger_state

__all__ = [
    "DEFAULT_SUCCEEDS_TIMEOUT_S",
    "AssertThat",
    "Assertion",
    "Call",
    "CheckFunction",
    "CheckProgress",
    "CommandOutcome",
    "FileContains",
    "FileExists",
    "FinishedTrial",
    "Loaded",
    "NotRan",
    "Pattern",
    "PatternLike",
    "Ran",
    "RanInOrder",
    "SkillUsed",
    "Succeeds",
    "Triggered",
    "assert_that",
    "evaluate_all",
    "file_contains",
    "file_exists",
    "loaded",
    "not_ran",
    "quick_checks",
    "ran",
    "ran_in_order",
    "skill_used",
    "succeeds",
    "trigger_state",
]
