"""Checks over a finished trial: what the agent ran, the files it left, commands that must succeed.

Each assertion is a small frozen value: ``check(trial)`` decides and explains, ``to_json()`` describes it
for the cache key. Eval files write them as YAML (``- ran: "neon deploy"``); Python eval files and pytest
tests call the constructors below.
"""

from __future__ import annotations

from ..evidence import Call, CommandOutcome
from ._base import Assertion, CheckProgress, check_one, evaluate_all, exit_text, unfinished
from ._calls import NotRan, Ran, RanInOrder, not_ran, ran, ran_in_order
from ._commands import DEFAULT_SUCCEEDS_TIMEOUT_S, Succeeds, succeeds
from ._custom import EVAL_MODULE_PREFIX, AssertThat, CheckFunction, assert_that
from ._files import FileContains, FileExists, file_contains, file_exists
from ._judge import (
    ASK_TIMEOUT_S,
    PROVIDERS,
    SHOW_ITEMS,
    Example,
    Judge,
    JudgeAsker,
    JudgeRef,
    is_uncalibrated,
)
from ._loaded import Loaded, SkillUsed, loaded, skill_used
from ._outside import NoOutsideWrites, no_outside_writes
from ._panel import (
    ANSWER_SHAPE,
    PREFERENCE_SHAPE,
    Answer,
    PairwiseTally,
    pairwise,
    parse_answer,
    parse_preference,
    tally_pairwise,
)
from ._pattern import Pattern, PatternLike
from ._trial import FinishedTrial
from ._triggered import Triggered, trigger_state

__all__ = [
    "ANSWER_SHAPE",
    "ASK_TIMEOUT_S",
    "DEFAULT_SUCCEEDS_TIMEOUT_S",
    "EVAL_MODULE_PREFIX",
    "PREFERENCE_SHAPE",
    "PROVIDERS",
    "SHOW_ITEMS",
    "Answer",
    "AssertThat",
    "Assertion",
    "Call",
    "CheckFunction",
    "CheckProgress",
    "CommandOutcome",
    "Example",
    "FileContains",
    "FileExists",
    "FinishedTrial",
    "Judge",
    "JudgeAsker",
    "JudgeRef",
    "Loaded",
    "NoOutsideWrites",
    "NotRan",
    "PairwiseTally",
    "Pattern",
    "PatternLike",
    "Ran",
    "RanInOrder",
    "SkillUsed",
    "Succeeds",
    "Triggered",
    "assert_that",
    "check_one",
    "evaluate_all",
    "exit_text",
    "file_contains",
    "file_exists",
    "is_uncalibrated",
    "loaded",
    "no_outside_writes",
    "not_ran",
    "pairwise",
    "parse_answer",
    "parse_preference",
    "ran",
    "ran_in_order",
    "skill_used",
    "succeeds",
    "tally_pairwise",
    "trigger_state",
    "unfinished",
]
