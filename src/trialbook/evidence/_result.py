"""What one agent run did: the record every adapter fills, whichever agent it drives.

A result describes the execution, never whether the task was done right: ``success`` says the session ran
to completion, ``evidence_complete`` says the record can be trusted, and the user's own checks say whether
the work is correct.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, get_args

from ._audit import RequestAudit
from ._isolated import OutsideWrite, RefusedConnection
from ._json import JsonObject, JsonValue
from ._loading import InstructionLoad
from ._tools import ToolCall
from ._usage import CostEstimate, UsageEntry, estimate_cost, sum_known

__all__ = ["STOP_REASONS", "AgentResult", "StopReason", "Turn"]

StopReason = Literal[
    "completed",
    "tool_budget_exceeded",
    "timeout",
    "request_audit_error",
    "execution_error",
    "cleanup_error",
]
STOP_REASONS: tuple[str, ...] = get_args(StopReason)


@dataclass(frozen=True)
class Turn:
    """One normalized conversation turn.

    ``role`` is ``user``, ``assistant`` or ``system``; ``content`` is ``None`` when the turn carried no
    text (for example an assistant turn that only requested tools); ``tool_call_ids`` names the calls
    requested in that turn, in order.
    """

    role: str
    content: str | None
    tool_call_ids: tuple[str | None, ...] = ()


@dataclass(frozen=True, kw_only=True)
class AgentResult:
    """The evidence of one agent run (one trial).

    ``cost_usd`` is the cost the agent itself reported (``0.0`` for agents that call no model), or ``None``
    when it reports none; :meth:`estimated_cost` prices token counts instead. ``request_audit`` holds one
    record per model request the agent sent, when its requests were audited (Copilot's request handler,
    the CLI agents' auditing proxy); ``()`` when nothing audited them.
    """

    DERIVED: ClassVar[tuple[str, ...]] = (
        "evidence_complete",
        "total_input_tokens",
        "total_output_tokens",
        "total_tokens",
    )
    """Properties the JSON codec writes beside the fields and checks again on load."""
    OMITTED_WHEN_NONE: ClassVar[tuple[str, ...]] = ("outside_writes", "network_refused")
    """Fields written only when known: a result that has none is saved as before they existed."""

    agent_name: str
    agent_version: str | None
    success: bool
    error: str | None
    stop_reason: StopReason | None
    turns: tuple[Turn, ...] = ()
    all_tool_calls: tuple[ToolCall, ...] = ()
    usage: tuple[UsageEntry, ...] = ()
    cost_usd: float | None = None
    model_used: str | None = None
    duration_ms: float | None = None
    working_directory: str | None = None
    raw_events: tuple[JsonValue, ...] = ()
    capture_errors: tuple[str, ...] = ()
    configuration: JsonObject | None = None
    request_audit: tuple[RequestAudit, ...] = ()
    instructions_loaded: tuple[InstructionLoad, ...] = ()
    """Each instruction file and skill the eval declared, and whether it reached the model."""
    outside_writes: tuple[OutsideWrite, ...] | None = None
    """Under isolation, the files the trial wrote outside its project folder (docs/isolation.md);
    ``None`` when nothing watched."""
    network_refused: tuple[RefusedConnection, ...] | None = None
    """Under isolation, where the trial tried to connect and was refused; ``None`` when nothing watched."""

    def impossible(self) -> list[tuple[str, str]]:
        """Values no real run can have (a negative cost or duration), as ``(field, why)``."""
        return [
            (name, f"{getattr(self, name)} is negative")
            for name in ("cost_usd", "duration_ms")
            if getattr(self, name) is not None and getattr(self, name) < 0
        ]

    # -- the execution tree -------------------------------------------------------------------------

    def execution_results(self) -> tuple[AgentResult, ...]:
        """This result and every framework-owned descendant result, each once, parents first."""
        return (self,)

    @property
    def evidence_complete(self) -> bool:
        """No capture error anywhere in the tree and every tool call's evidence is complete."""
        return all(
            not result.capture_errors and all(call.evidence_complete for call in result.all_tool_calls)
            for result in self.execution_results()
        )

    # -- responses ----------------------------------------------------------------------------------

    @property
    def all_responses(self) -> tuple[str, ...]:
        """The text of every assistant turn that had text, in order."""
        return tuple(t.content for t in self.turns if t.role == "assistant" and t.content is not None)

    @property
    def final_response(self) -> str | None:
        """The last assistant text, or ``None`` when the agent said nothing."""
        responses = self.all_responses
        return responses[-1] if responses else None

    # -- tools ----------------------------------------------------------------------------------------

    def tool_calls_for(self, name: str) -> tuple[ToolCall, ...]:
        """Every recorded call of the tool ``name`` in this session, in order."""
        return tuple(call for call in self.all_tool_calls if call.name == name)

    def tool_was_called(self, name: str) -> bool:
        """Whether this session recorded at least one call of ``name``."""
        return bool(self.tool_calls_for(name))

    def tool_call_count(self, name: str) -> int:
        """How many calls of ``name`` this session recorded."""
        return len(self.tool_calls_for(name))

    def tool_was_called_with(self, name: str, **arguments: JsonValue) -> bool:
        """Whether some call of ``name`` had every given argument with an equal value."""
        for call in self.tool_calls_for(name):
            args = call.arguments
            if isinstance(args, dict) and all(k in args and args[k] == v for k, v in arguments.items()):
                return True
        return False

    # -- usage ----------------------------------------------------------------------------------------

    def _tree_usage(self) -> tuple[UsageEntry, ...] | None:
        """All usage in the tree, or ``None`` when some captured session reported none at all."""
        entries: list[UsageEntry] = []
        for result in self.execution_results():
            if not result.usage:
                return None
            entries.extend(result.usage)
        return tuple(entries)

    def _tree_total(self, field: str) -> int | None:
        usage = self._tree_usage()
        if usage is None:
            return None
        return sum_known(getattr(entry, field) for entry in usage)

    @property
    def total_input_tokens(self) -> int | None:
        """Input tokens across the execution tree, counted once; ``None`` when any count is unknown."""
        return self._tree_total("input_tokens")

    @property
    def total_output_tokens(self) -> int | None:
        """Output tokens across the execution tree, counted once; ``None`` when any count is unknown."""
        return self._tree_total("output_tokens")

    @property
    def total_tokens(self) -> int | None:
        """Input plus output tokens, or ``None`` when either is unknown."""
        inp, out = self.total_input_tokens, self.total_output_tokens
        return None if inp is None or out is None else inp + out

    @property
    def token_usage(self) -> dict[str, int]:
        """The known totals by name; unknown totals are left out rather than shown as zero."""
        totals = {
            "input_tokens": self.total_input_tokens,
            "output_tokens": self.total_output_tokens,
            "total_tokens": self.total_tokens,
        }
        return {name: value for name, value in totals.items() if value is not None}

    def estimated_cost(self) -> CostEstimate:
        """Price the tree's usage; models without a price are named in ``unpriced_models``."""
        usage = self._tree_usage()
        if usage is None:
            return CostEstimate(usd=None, unpriced_models=())
        return estimate_cost(usage)

    # -- files in the working directory -------------------------------------------------------------

    def _root(self) -> Path:
        if self.working_directory is None:
            raise ValueError("this result has no working_directory to read files from")
        return Path(self.working_directory)

    def file(self, path: str) -> str:
        """The text of ``path`` relative to the working directory."""
        return (self._root() / path).read_text(encoding="utf-8")

    def file_exists(self, path: str) -> bool:
        """Whether ``path`` exists in the working directory."""
        return (self._root() / path).exists()

    def files_matching(self, pattern: str) -> tuple[str, ...]:
        """Relative POSIX paths in the working directory matching a glob such as ``**/*.py``, sorted."""
        root = self._root()
        found: set[str] = set()
        for candidate in _walk(root):
            rel = candidate.relative_to(root).as_posix()
            if fnmatch.fnmatch(rel, pattern) or candidate.match(pattern) or _glob_match(rel, pattern):
                found.add(rel)
        return tuple(sorted(found))


def _walk(root: Path) -> Iterator[Path]:
    for path in root.rglob("*"):
        if path.is_file():
            yield path


def _glob_match(rel: str, pattern: str) -> bool:
    # "**/x" also matches "x" at the top level, as in shells with globstar.
    return pattern.startswith("**/") and fnmatch.fnmatch(rel, pattern[3:])
