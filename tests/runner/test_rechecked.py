"""What a re-checked trial refuses to answer: whatever the record does not hold as the agent left it."""

from __future__ import annotations

from pathlib import Path

import pytest

from trialbook.assertions import Call
from trialbook.assertions._custom import assert_that
from trialbook.assertions._files import file_contains, file_exists
from trialbook.evidence import AgentResult
from trialbook.runner._rechecked import COMMAND_REASON, NotRescorable, RecheckedTrial, recheck
from trialbook.sandbox import TemplateFilter
from trialbook.sandbox._finished import SandboxTrial
from trialbook.sandbox._rebuild import Rebuilt


def _trial(
    tmp_path: Path,
    *,
    missing: dict[str, str] | None = None,
    problems: tuple[str, ...] = (),
    result_masked: bool = False,
    calls_masked: bool = False,
) -> RecheckedTrial:
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs/readme.md").write_text("hello\n")
    (work / ".env").write_text("TOKEN=***\n")
    (work / "to-env").symlink_to(".env")
    result = AgentResult(
        agent_name="s", agent_version=None, success=True, error=None, stop_reason="completed"
    )
    calls = [Call(("tool", "deploy"), str(work), 0, 0.0, 1.0)]
    inner = SandboxTrial(workdir=work, env={}, result=result, calls=calls)
    rebuilt = Rebuilt(problems, missing or {})
    keep = TemplateFilter.of(["build/"])
    return RecheckedTrial(inner, rebuilt, keep, result_masked=result_masked, calls_masked=calls_masked)


def test_known_paths_answer_and_missing_ones_refuse_also_through_a_link(tmp_path: Path) -> None:
    trial = _trial(tmp_path, missing={".env": "its content held a secret, kept masked"})
    assert trial.read_text("docs/readme.md") == "hello\n"
    assert trial.exists("./docs/") and not trial.exists("nothing.txt")
    for path in (".env", "to-env"):
        with pytest.raises(NotRescorable, match="held a secret"):
            trial.read_text(path)
    with pytest.raises(NotRescorable, match="left out of the record"):
        trial.exists("build/out.js")
    with pytest.raises(NotRescorable, match="not all of it is recorded"):
        _ = trial.workdir
    assert _trial(tmp_path / "whole").workdir.is_dir()  # a complete rebuild may be read directly


def test_commands_masked_results_and_calls_and_an_incomplete_record_refuse(tmp_path: Path) -> None:
    with pytest.raises(NotRescorable, match="runs a command"):
        _trial(tmp_path / "a").run("true", 5)
    with pytest.raises(NotRescorable, match="result held a secret"):
        _ = _trial(tmp_path / "b", result_masked=True).result
    with pytest.raises(NotRescorable, match="call log held a secret"):
        _ = _trial(tmp_path / "c", calls_masked=True).calls
    incomplete = _trial(tmp_path / "d", problems=("3 changed paths past the limit",))
    with pytest.raises(NotRescorable, match="past the limit"):
        incomplete.exists("docs/readme.md")
    assert _trial(tmp_path / "e").calls[0].argv == ("tool", "deploy")


def test_a_check_that_swallows_the_refusal_is_still_not_rescorable(tmp_path: Path) -> None:
    def sneaky(trial: object) -> bool:
        try:
            trial.run("make test", 5)  # type: ignore[attr-defined]
        except Exception:
            return True  # would pass, had the refusal not been noted
        return False

    trial = _trial(tmp_path)
    checks = (
        file_exists("docs/readme.md"),
        assert_that("sneaky", sneaky),
        file_contains("docs/readme.md", "hello"),
    )
    records, reasons = recheck(checks, trial)
    assert reasons == (f'assert_that "sneaky": {COMMAND_REASON}',)
    assert [record.passed for record in records] == [True, True]
