"""Did the agent reach for a skill? Decided from the agent's own evidence, never from what the model said.

A trigger eval asks a query and checks one thing: whether the agent used the skill. The evidence is a
tool call: the skill tool (Copilot's ``skill``, Claude Code's ``Skill``) naming it, or any tool call that
reads the skill's ``SKILL.md`` (Codex has no skill tool and reads the file with a command). A trial in
which no model answered (the literal and script agents run a fixed script; a session can fail before
the first answer) made no choice either way: the state is ``None``, never "not triggered".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..evidence import AgentResult, AssertionRecord, JsonObject
from ._base import make_label
from ._loaded import find_row, uses_skill
from ._trial import FinishedTrial

__all__ = ["Triggered", "trigger_state"]


def trigger_state(result: AgentResult, skill: str) -> tuple[bool | None, str]:
    """Whether the trial used ``skill`` (``None``: its evidence cannot tell), and the evidence for it."""
    if result.model_used is None and not result.usage:
        # Nothing shows a model answered: a fixed script (literal, script agents) decides nothing, and a
        # session that failed before the first answer made no choice to record.
        return None, "unknown: no model answered in this trial, so no choice of skill was made"
    row = find_row(result, skill)
    skill_file = f"{row.path}/SKILL.md" if row is not None and row.kind == "skill" else None
    for call in result.all_tool_calls:
        if uses_skill(call.name or "", call.arguments, skill, skill_file):
            return True, f"tool call {call.name or '?'} (id {call.call_id or '?'}) used {skill}"
    tools = sorted({call.name or "?" for call in result.all_tool_calls})
    seen = ", ".join(tools) if tools else "none"
    return False, f"no tool call used {skill} or read its SKILL.md (tools called: {seen})"


@dataclass(frozen=True)
class Triggered:
    """The check of a trigger query: the agent used ``skill`` (``expect``) or left it alone (``not expect``).

    An unknown state fails the trial, saying why; trigger scores count such trials apart as unknown.
    """

    skill: str
    expect: bool
    kind: ClassVar[str] = "triggered"

    @property
    def label(self) -> str:
        """``triggered "<skill>"`` or ``not triggered "<skill>"``."""
        return make_label(self.kind if self.expect else f"not {self.kind}", self.skill)

    def check(self, trial: FinishedTrial) -> AssertionRecord:
        """Pass when the evidence decided and matches the label."""
        state, why = trigger_state(trial.result, self.skill)
        return AssertionRecord(
            kind=self.kind,
            label=self.label,
            passed=state is self.expect,
            expected=f"skill {self.skill} {'used' if self.expect else 'not used'}",
            actual=why,
        )

    def to_json(self) -> JsonObject:
        """``{"kind": "triggered", "skill": ..., "expect": ...}``."""
        return {"kind": self.kind, "skill": self.skill, "expect": self.expect}
