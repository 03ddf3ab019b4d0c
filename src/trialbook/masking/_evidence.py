"""Masking evidence records field by field: captured text is masked, trialbook's own vocabulary is not (pure).

The walk goes through the dataclasses of the evidence model (results, turns, tool calls, Copilot records)
and masks every string it meets, except fields whose values trialbook or the schema define (a stop
reason, a role, an agent name, a hash). Masking those would not hide anything an agent said, but a
secret such as ``pass`` would turn ``passed`` into ``***ed`` and break the file that holds it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from ..evidence import AgentResult, AssertionRecord, Call, JsonValue
from ._masker import Masker

__all__ = ["masked_call", "masked_record", "masked_result"]

R = TypeVar("R", bound=AgentResult)

_VOCABULARY = frozenset(
    {
        "agent_name",
        "agent_version",
        "stop_reason",
        "role",
        "status",
        "kind",
        "media_type",
        "image_media_type",
        "instructions_sha256",
        "call_id",
        "tool_call_ids",
    }
)
"""Field names whose values are schema vocabulary or identifiers trialbook and the agents define."""


def _walk(value: Any, masker: Masker) -> Any:
    if isinstance(value, str):
        return masker.text(value)
    if isinstance(value, tuple):
        return tuple(_walk(item, masker) for item in value)
    if isinstance(value, list | dict):
        json_value: JsonValue = value
        return masker.json(json_value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            field.name: _walk(getattr(value, field.name), masker)
            for field in dataclasses.fields(value)
            if field.init and field.name not in _VOCABULARY
        }
        return dataclasses.replace(value, **changes)
    return value


def masked_result(result: R, masker: Masker) -> R:
    """``result`` with every captured string masked: messages, tool arguments and output, raw events."""
    if not masker.active:
        return result
    masked: R = _walk(result, masker)
    return masked


def masked_record(record: AssertionRecord, masker: Masker) -> AssertionRecord:
    """A check's record with its label, expectation, observation and error masked."""
    if not masker.active:
        return record
    return dataclasses.replace(
        record,
        label=masker.text(record.label),
        expected=masker.text(record.expected),
        actual=masker.text(record.actual),
        error=None if record.error is None else masker.text(record.error),
    )


def masked_call(call: Call, masker: Masker) -> Call:
    """A shim call with its arguments, folder and error masked; ``argv[0]`` is the shim's own name."""
    if not masker.active:
        return call
    return dataclasses.replace(
        call,
        argv=(call.argv[0], *(masker.text(arg) for arg in call.argv[1:])),
        cwd=masker.text(call.cwd),
        error=None if call.error is None else masker.text(call.error),
        path=None if call.path is None else masker.text(call.path),
    )
