"""Which checks the runner may run on its event loop: only built-in ones that cannot block."""

from __future__ import annotations

from dataclasses import dataclass

from trialbook.assertions import (
    Assertion,
    FileExists,
    FinishedTrial,
    assert_that,
    file_contains,
    file_exists,
    loaded,
    not_ran,
    quick_checks,
    ran,
    ran_in_order,
    skill_used,
    succeeds,
)
from trialbook.evidence import AssertionRecord


def _holds(trial: FinishedTrial) -> bool:
    return True


def test_file_and_call_checks_are_quick() -> None:
    checks: list[Assertion] = [
        file_exists("a"),
        file_contains("a", "b"),
        ran("git"),
        not_ran("rm"),
        ran_in_order(["a", "b"]),
        loaded("AGENTS.md"),
        skill_used("deploy"),
    ]
    assert quick_checks(checks)
    assert quick_checks([])


def test_a_command_or_user_code_is_not_quick() -> None:
    assert not quick_checks([file_exists("a"), succeeds("pytest")])
    assert not quick_checks([assert_that("holds", _holds)])


@dataclass(frozen=True)
class _Slow(FileExists):
    """A subclass may do anything in ``check``: it is not taken for the built-in one."""

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        return super().check(trial)


def test_a_subclass_of_a_quick_check_is_not_quick() -> None:
    assert not quick_checks([_Slow("a")])
