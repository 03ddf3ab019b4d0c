"""The evidence model: what agent runs did, and the strict schema-4.0 JSON it is saved as.

Read a result in this order: execution status (``success``, ``error``, ``stop_reason``), then evidence
completeness (``evidence_complete``, ``capture_errors``), then your own checks of the work.
"""

from __future__ import annotations

from ._audit import RequestAudit
from ._bounded import loads_bounded
from ._calls import Call, CommandOutcome
from ._codec import dump_result, dump_test, load_result, load_test, suite_from_json, suite_to_json
from ._copilot import CopilotResult, DiscoveredSkill, SkillDiscovery, SubagentInvocation
from ._errors import EvidenceError, EvidenceSchemaError, EvidenceWriteError
from ._isolated import OutsideWrite, RefusedConnection
from ._json import JsonObject, JsonValue
from ._loading import (
    DeclaredInput,
    InputKind,
    InstructionLoad,
    LoadTracker,
    loaded_from_requests,
    normalize_text,
    request_context,
)
from ._publish import load_suite, publish_json, read_json, save_suite
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
from ._runs import LATEST, RUN_ID_PATTERN, latest_run
from ._safe import is_sensitive_key, safe_configuration
from ._schema import suite_json_schema
from ._tools import ToolCall, ToolImage
from ._usage import PRICES, CostEstimate, ModelPrice, UsageEntry, estimate_cost, sum_known

__all__ = [
    "LATEST",
    "OUTCOMES",
    "PRICES",
    "RUN_ID_PATTERN",
    "SCHEMA_VERSION",
    "STOP_REASONS",
    "AgentResult",
    "AssertionRecord",
    "Call",
    "CommandOutcome",
    "CopilotResult",
    "CostEstimate",
    "DeclaredInput",
    "DiscoveredSkill",
    "EvidenceError",
    "EvidenceSchemaError",
    "EvidenceWriteError",
    "ExecutionRecord",
    "InputKind",
    "InstructionLoad",
    "JsonObject",
    "JsonValue",
    "LoadTracker",
    "ModelPrice",
    "Outcome",
    "OutsideWrite",
    "RefusedConnection",
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
    "dump_result",
    "dump_test",
    "estimate_cost",
    "is_sensitive_key",
    "latest_run",
    "load_result",
    "load_suite",
    "load_test",
    "loaded_from_requests",
    "loads_bounded",
    "normalize_text",
    "publish_json",
    "read_json",
    "request_context",
    "safe_configuration",
    "save_suite",
    "suite_from_json",
    "suite_json_schema",
    "suite_to_json",
    "sum_known",
]
