"""Checks over a finished trial: what the agent ran, the files it left, commands that must succeed.

Each assertion is a small frozen value: ``check(trial)`` decides and explains, ``to_json()`` describes it
for the cache key. Eval files write them as YAML (``- ran: "neon deploy"``); Python eval files and pytest
tests call the constructors below.

The names load on first use: a run whose evals use only some kinds never defines the other kinds'
classes, whose definitions (frozen dataclasses) cost every start of ``trialbook eval``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy_exports

if TYPE_CHECKING:
    from ._base import Assertion, CheckProgress, evaluate_all
    from ._calls import NotRan, Ran, RanInOrder, not_ran, ran, ran_in_order
    from ._commands import DEFAULT_SUCCEEDS_TIMEOUT_S, Succeeds, succeeds
    from ._custom import AssertThat, CheckFunction, assert_that
    from ._files import FileContains, FileExists, file_contains, file_exists
    from ._inputs import Loaded, SkillUsed, loaded, skill_used
    from ._judge import Judge, JudgeAsker, JudgeRef
    from ._pattern import Pattern, PatternLike
    from ._quick import quick_checks
    from ._trial import Call, CommandOutcome, FinishedTrial
    from ._triggered import Triggered, trigger_state

_LAZY = {
    "Assertion": "_base",
    "evaluate_all": "_base",
    "CheckProgress": "_base",
    "NotRan": "_calls",
    "Ran": "_calls",
    "RanInOrder": "_calls",
    "not_ran": "_calls",
    "ran": "_calls",
    "ran_in_order": "_calls",
    "DEFAULT_SUCCEEDS_TIMEOUT_S": "_commands",
    "Succeeds": "_commands",
    "succeeds": "_commands",
    "AssertThat": "_custom",
    "CheckFunction": "_custom",
    "assert_that": "_custom",
    "FileContains": "_files",
    "FileExists": "_files",
    "file_contains": "_files",
    "file_exists": "_files",
    "Loaded": "_inputs",
    "SkillUsed": "_inputs",
    "loaded": "_inputs",
    "skill_used": "_inputs",
    "Judge": "_judge",
    "JudgeAsker": "_judge",
    "JudgeRef": "_judge",
    "Pattern": "_pattern",
    "PatternLike": "_pattern",
    "quick_checks": "_quick",
    "Call": "_trial",
    "CommandOutcome": "_trial",
    "FinishedTrial": "_trial",
    "Triggered": "_triggered",
    "trigger_state": "_triggered",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)

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
    "Judge",
    "JudgeAsker",
    "JudgeRef",
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
