"""Assertions over the eval's instruction files and skills: did one reach the model, was a skill used."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import ClassVar

from ..evidence import AgentResult, AssertionRecord, InstructionLoad, JsonObject
from ._base import make_label
from ._trial import FinishedTrial

__all__ = ["NO_AUDIT", "Loaded", "SkillUsed", "find_row", "loaded", "skill_used", "uses_skill"]

SHARED_TEXT = (
    "requests were audited, but its text went out only without a file name while another instruction "
    "file in the sandbox holds the same text, so which file the agent loaded is unknown; make them differ"
)
NO_AUDIT = (
    "no request audit ran, so whether it reached the model is unknown; set audit_requests: true on the "
    "agent (see docs/agents.md, Instruction files and skills)"
)

SKILL_TOOLS = frozenset({"skill", "Skill"})
"""Tool names agents give their skill tool (Copilot ``skill``, Claude Code ``Skill``)."""


def find_row(result: AgentResult, name: str) -> InstructionLoad | None:
    """The evidence row of ``name``: an instruction file's sandbox path, or a skill's name or path."""
    for row in result.instructions_loaded:
        if row.path == name or (row.kind == "skill" and row.path.rsplit("/", 1)[-1] == name):
            return row
    return None


def _declared(result: AgentResult) -> str:
    return ", ".join(row.path for row in result.instructions_loaded) or "none"


@dataclass(frozen=True)
class Loaded:
    """The declared instruction file or skill ``name`` reached the model, as the request audit saw it."""

    name: str
    kind: ClassVar[str] = "loaded"

    @property
    def label(self) -> str:
        """``loaded "<name>"``."""
        return make_label(self.kind, self.name)

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass only on ``loaded: true``; unknown (no audit) fails and says how to find out."""
        row = find_row(trial.result, self.name)
        if row is None:
            declared = _declared(trial.result)
            actual = f"{self.name} is not a declared instruction file or skill (declared: {declared})"
        elif row.loaded is None and trial.result.request_audit:
            actual = f"{row.path}: {SHARED_TEXT}"
        elif row.loaded is None:
            actual = f"{row.path}: {NO_AUDIT}"
        elif row.loaded:
            actual = f"{row.path} was in the context of a request sent to the model"
        else:
            actual = (
                f"{row.path} was placed in the sandbox, but no request sent to the model held its text "
                "as its own"
            )
        return AssertionRecord(
            kind=self.kind,
            label=self.label,
            passed=row is not None and row.loaded is True,
            expected=f"{self.name} reached the model",
            actual=actual,
        )

    def to_json(self) -> JsonObject:
        """``{"kind": "loaded", "name": ...}``."""
        return {"kind": self.kind, "name": self.name}


def uses_skill(call_name: str, arguments: object, skill: str, skill_file: str | None) -> bool:
    """Whether one tool call used ``skill``: its skill tool naming it, or a read of its ``SKILL.md``."""
    if call_name in SKILL_TOOLS and isinstance(arguments, dict):
        values = [str(value).lstrip("/") for value in arguments.values() if isinstance(value, str)]
        if skill in values:
            return True
    # Agents without a skill tool (Codex) use a skill by reading its SKILL.md with a command.
    return skill_file is not None and skill_file in json.dumps(arguments, ensure_ascii=False)


@dataclass(frozen=True)
class SkillUsed:
    """The agent used the skill ``name``: through its skill tool, or by reading the skill's ``SKILL.md``."""

    name: str
    kind: ClassVar[str] = "skill_used"

    @property
    def label(self) -> str:
        """``skill_used "<name>"``."""
        return make_label(self.kind, self.name)

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass when a tool call invoked the skill or read its file; the call is named in the record."""
        result = trial.result
        row = find_row(result, self.name)
        skill_file = f"{row.path}/SKILL.md" if row is not None and row.kind == "skill" else None
        used = [
            call
            for call in result.all_tool_calls
            if uses_skill(call.name or "", call.arguments, self.name, skill_file)
        ]
        if used:
            actual = f"tool call {used[0].name} used it ({len(used)} call{'s' if len(used) > 1 else ''})"
        else:
            names = sorted({call.name or "?" for call in result.all_tool_calls})
            seen = ", ".join(names) if names else "no tool calls"
            actual = f"no tool call invoked {self.name} or read its SKILL.md (tools called: {seen})"
        return AssertionRecord(
            kind=self.kind,
            label=self.label,
            passed=bool(used),
            expected=f"skill {self.name} was used",
            actual=actual,
        )

    def to_json(self) -> JsonObject:
        """``{"kind": "skill_used", "name": ...}``."""
        return {"kind": self.kind, "name": self.name}


def loaded(name: str) -> Loaded:
    """``loaded("AGENTS.md")``: the declared file (a skill: by name) reached the model."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(
            "the name is empty (give an instruction file's path in the sandbox, or a skill's name)"
        )
    return Loaded(name)


def skill_used(name: str) -> SkillUsed:
    """``skill_used("deploy")``: the agent used the skill named ``deploy``."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("the name is empty (give the skill's name, e.g. deploy)")
    return SkillUsed(name)
