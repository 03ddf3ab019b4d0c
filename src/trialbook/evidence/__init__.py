"""The evidence model: what agent runs did, and the strict schema-4.0 JSON it is saved as.

Read a result in this order: execution status (``success``, ``error``, ``stop_reason``), then evidence
completeness (``evidence_complete``, ``capture_errors``), then your own checks of the work.

The names load on first use: a local run writes plain results, and defining the Copilot result's
classes or the JSON Schema's builder would cost every start of ``trialbook eval``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy_exports

if TYPE_CHECKING:
    from ._audit import RequestAudit
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
    from ._safe import is_sensitive_key, safe_configuration
    from ._schema import suite_json_schema
    from ._tools import ToolCall, ToolImage
    from ._usage import PRICES, CostEstimate, ModelPrice, UsageEntry, estimate_cost, sum_known

_LAZY = {
    "RequestAudit": "_audit",
    "dump_result": "_codec",
    "dump_test": "_codec",
    "load_result": "_codec",
    "load_test": "_codec",
    "suite_from_json": "_codec",
    "suite_to_json": "_codec",
    "CopilotResult": "_copilot",
    "DiscoveredSkill": "_copilot",
    "SkillDiscovery": "_copilot",
    "SubagentInvocation": "_copilot",
    "EvidenceError": "_errors",
    "EvidenceSchemaError": "_errors",
    "EvidenceWriteError": "_errors",
    "OutsideWrite": "_isolated",
    "RefusedConnection": "_isolated",
    "JsonObject": "_json",
    "JsonValue": "_json",
    "DeclaredInput": "_loading",
    "InputKind": "_loading",
    "InstructionLoad": "_loading",
    "LoadTracker": "_loading",
    "loaded_from_requests": "_loading",
    "normalize_text": "_loading",
    "request_context": "_loading",
    "load_suite": "_publish",
    "publish_json": "_publish",
    "read_json": "_publish",
    "save_suite": "_publish",
    "OUTCOMES": "_report",
    "SCHEMA_VERSION": "_report",
    "AssertionRecord": "_report",
    "ExecutionRecord": "_report",
    "Outcome": "_report",
    "SuiteMetadata": "_report",
    "SuiteReport": "_report",
    "TestReport": "_report",
    "STOP_REASONS": "_result",
    "AgentResult": "_result",
    "StopReason": "_result",
    "Turn": "_result",
    "is_sensitive_key": "_safe",
    "safe_configuration": "_safe",
    "suite_json_schema": "_schema",
    "ToolCall": "_tools",
    "ToolImage": "_tools",
    "PRICES": "_usage",
    "CostEstimate": "_usage",
    "ModelPrice": "_usage",
    "UsageEntry": "_usage",
    "estimate_cost": "_usage",
    "sum_known": "_usage",
}


__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)


__all__ = [
    "OUTCOMES",
    "PRICES",
    "SCHEMA_VERSION",
    "STOP_REASONS",
    "AgentResult",
    "AssertionRecord",
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
    "load_result",
    "load_suite",
    "load_test",
    "loaded_from_requests",
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
