"""The evidence model: what agent runs did, and the strict schema-4.0 JSON it is saved as.

Read a result in this order: execution status (``success``, ``error``, ``stop_reason``), then evidence
completeness (``evidence_complete``, ``capture_errors``), then your own checks of the work.
"""

from ._copilot import CopilotResult, DiscoveredSkill, RequestAudit, SkillDiscovery, SubagentInvocation
from ._json import JsonObject, JsonValue
from ._report import (
    OUTCOMES,
    SCHEMA_VERSION,
    AssertionRecord,
    ExecutionRecord,
    Outcome,
    SuiteMetadata,
    SuiteReport,
    TestReport,
)
from ._result import STOP_REASONS, AgentResult, StopReason, Turn
from ._tools import ToolCall, ToolImage
from ._usage import PRICES, CostEstimate, ModelPrice, UsageEntry, estimate_cost, sum_known

__all__ = [
    "OUTCOMES",
    "PRICES",
    "SCHEMA_VERSION",
    "STOP_REASONS",
    "AgentResult",
    "AssertionRecord",
    "CopilotResult",
    "CostEstimate",
    "DiscoveredSkill",
    "ExecutionRecord",
    "JsonObject",
    "JsonValue",
    "ModelPrice",
    "Outcome",
    "RequestAudit",
    "SkillDiscovery",
    "StopReason",
    "SubagentInvocation",
    "SuiteMetadata",
    "SuiteReport",
    "TestReport",
    "ToolCall",
    "ToolImage",
    "Turn",
    "UsageEntry",
    "estimate_cost",
    "sum_known",
]
