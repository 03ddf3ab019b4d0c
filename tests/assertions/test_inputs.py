"""``loaded`` and ``skill_used``: only a decided ``true`` passes, and unknown says how to find out."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from trialbook.assertions import loaded, skill_used
from trialbook.evidence import InstructionLoad, JsonValue, ToolCall

from .dir_trial import DirTrial

ROWS = (
    InstructionLoad("AGENTS.md", "instructions", "a" * 64, True),
    InstructionLoad(".github/copilot-instructions.md", "instructions", "b" * 64, False),
    InstructionLoad("CLAUDE.md", "instructions", "c" * 64, None),
    InstructionLoad(".agents/skills/deploy", "skill", "d" * 64, True),
)


def _trial(tmp_path: Path, *calls: tuple[str, JsonValue]) -> DirTrial:
    trial = DirTrial(tmp_path)
    tools = tuple(ToolCall(f"c{i}", name, args, True, True, "", None) for i, (name, args) in enumerate(calls))
    trial.result = replace(trial.result, instructions_loaded=ROWS, all_tool_calls=tools)
    return trial


@pytest.mark.parametrize(
    ("name", "passed", "actual"),
    [
        ("AGENTS.md", True, "AGENTS.md was in the context of a request sent to the model"),
        ("deploy", True, ".agents/skills/deploy was in the context"),
        (
            ".github/copilot-instructions.md",
            False,
            ".github/copilot-instructions.md was placed in the sandbox, but no request sent to the model",
        ),
        (
            "CLAUDE.md",
            False,
            "CLAUDE.md: no request audit ran, so whether it reached the model is unknown; "
            "set audit_requests: true on the agent",
        ),
        ("README.md", False, "README.md is not a declared instruction file or skill (declared: AGENTS.md, "),
    ],
)
def test_loaded_passes_only_on_a_decided_true(tmp_path: Path, name: str, passed: bool, actual: str) -> None:
    record = loaded(name).check(_trial(tmp_path))
    assert (record.passed, record.kind, record.label) == (passed, "loaded", f'loaded "{name}"')
    assert record.actual.startswith(actual)


def test_skill_used_through_the_skill_tool_or_by_reading_its_file(tmp_path: Path) -> None:
    assert skill_used("deploy").check(_trial(tmp_path, ("skill", {"skill": "deploy"}))).passed
    assert skill_used("deploy").check(_trial(tmp_path, ("Skill", {"skill": "/deploy"}))).passed
    codex: tuple[str, JsonValue] = (
        "command_execution",
        {"command": "sed -n 1,80p .agents/skills/deploy/SKILL.md"},
    )
    record = skill_used("deploy").check(_trial(tmp_path, codex))
    assert record.passed and record.actual == "tool call command_execution used it (1 call)"
    # Another skill's tool call, or only a mention of the name in a command, is not using it.
    other = _trial(tmp_path, ("skill", {"skill": "deploy-docs"}), ("bash", {"command": "echo deploy"}))
    record = skill_used("deploy").check(other)
    assert not record.passed
    assert record.actual == "no tool call invoked deploy or read its SKILL.md (tools called: bash, skill)"


def test_empty_names_are_refused_and_each_check_has_its_own_cache_form() -> None:
    with pytest.raises(ValueError, match="the name is empty"):
        loaded(" ")
    with pytest.raises(ValueError, match="the name is empty"):
        skill_used("")
    assert loaded("deploy").to_json() != skill_used("deploy").to_json()
    assert loaded("AGENTS.md").to_json() == {"kind": "loaded", "name": "AGENTS.md"}
