"""What a GitHub Copilot session recorded beyond the common result: subagents, skills, premiums."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ._result import AgentResult
from ._usage import UsageEntry

__all__ = ["CopilotResult", "DiscoveredSkill", "SkillDiscovery", "SubagentInvocation"]


@dataclass(frozen=True)
class DiscoveredSkill:
    """A skill the SDK reported as available before the prompt was sent; optional metadata stays ``None``."""

    name: str
    description: str | None
    source: str | None
    enabled: bool
    user_invocable: bool | None
    path: str | None
    plugin_name: str | None
    command_name: str | None
    argument_hint: str | None


@dataclass(frozen=True)
class SkillDiscovery:
    """What skill discovery found for explicit skill directories.

    ``complete`` means discovery finished, not that it succeeded: read ``errors`` too. ``skills == ()``
    means the finished list was empty.
    """

    skills: tuple[DiscoveredSkill, ...]
    warnings: tuple[str, ...]
    errors: tuple[str, ...]
    complete: bool


@dataclass(frozen=True, kw_only=True)
class SubagentInvocation:
    """A custom agent the session routed work to.

    ``result`` holds the child's own record when trialbook ran and captured that child session, and
    ``None`` when only the parent's events mention it.
    """

    invocation_id: str | None
    name: str | None
    status: str
    duration_ms: float | None
    result: CopilotResult | None = None


@dataclass(frozen=True, kw_only=True)
class CopilotResult(AgentResult):
    """The evidence of one Copilot session, with framework-owned child sessions nested in it.

    ``turns``, ``all_tool_calls`` and ``usage`` stay session-local; ``all_usage`` and the token and
    premium totals include descendants once. ``effective_system_prompt`` is the system-message text
    trialbook supplied (instructions, then personas, or an ``extra_config`` override), not Copilot's hidden
    instructions; it is ``None`` when none was supplied or preparation failed before the snapshot.
    """

    DERIVED: ClassVar[tuple[str, ...]] = (*AgentResult.DERIVED, "total_premium_requests")

    premium_requests: float | None = None
    subagent_invocations: tuple[SubagentInvocation, ...] = ()
    permission_requested: bool = False
    tool_calls_admitted: int | None = None
    skill_discovery: SkillDiscovery | None = None
    effective_system_prompt: str | None = None

    def impossible(self) -> list[tuple[str, str]]:
        """Counts that cannot be negative, as ``(field, why)``; the codec refuses a record with any."""
        found = super().impossible()
        for name in ("premium_requests", "tool_calls_admitted"):
            value = getattr(self, name)
            if value is not None and value < 0:
                found.append((name, f"{value} is negative"))
        return found

    def execution_results(self) -> tuple[AgentResult, ...]:
        """This session, then each captured child session's tree, in invocation order."""
        results: list[AgentResult] = [self]
        for invocation in self.subagent_invocations:
            if invocation.result is not None:
                results.extend(invocation.result.execution_results())
        return tuple(results)

    @property
    def all_usage(self) -> tuple[UsageEntry, ...]:
        """Usage of this session and every captured descendant, each entry once."""
        return tuple(entry for result in self.execution_results() for entry in result.usage)

    @property
    def total_premium_requests(self) -> float | None:
        """Premium requests across the tree, or ``None`` when any session's count is unknown."""
        total = 0.0
        for result in self.execution_results():
            value = result.premium_requests if isinstance(result, CopilotResult) else None
            if value is None:
                return None
            total += value
        return total
