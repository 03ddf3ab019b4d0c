"""Every CopilotResult field and helper, and every field of the records inside it, is documented.

The tables in docs/copilot.md and docs/pytest-plugin.md are what users read to learn what unknown looks
like; a field added to the dataclasses without a row would be a field nobody knows how to read.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from trialbook.evidence import (
    CopilotResult,
    CostEstimate,
    DiscoveredSkill,
    RequestAudit,
    SkillDiscovery,
    SubagentInvocation,
    ToolCall,
    ToolImage,
    Turn,
    UsageEntry,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
INSIDE: tuple[type, ...] = (Turn, ToolCall, ToolImage, UsageEntry, RequestAudit, SkillDiscovery)
INSIDE += (DiscoveredSkill, SubagentInvocation, CostEstimate)


def documented(page: str) -> set[str]:
    """Names in the first column of every table on ``page``: ``name``, ``name(args)``, ``Type.name``."""
    names: set[str] = set()
    for line in (DOCS / page).read_text().splitlines():
        if line.startswith("| `"):
            first = line.split(" | ")[0]
            names.update(re.sub(r"\(.*\)$", "", name) for name in re.findall(r"`([^`]+)`", first))
    return names


def public(cls: type) -> set[str]:
    """Fields, properties and methods a reader of ``cls`` can use."""
    names = {f.name for f in dataclasses.fields(cls)}
    names |= {n for n in dir(cls) if not n.startswith("_") and n not in dir(object)}
    return names


@pytest.mark.parametrize("page", ["copilot.md", "pytest-plugin.md"])
def test_every_copilot_result_name_has_a_row(page: str) -> None:
    assert public(CopilotResult) - documented(page) == set()


def test_every_field_of_the_records_inside_has_a_row() -> None:
    names = documented("copilot.md")
    missing = set()
    for cls in INSIDE:
        for name in public(cls) - {"DERIVED"}:
            if f"{cls.__name__}.{name}" not in names and not (cls is ToolCall and name in names):
                missing.add(f"{cls.__name__}.{name}")
    assert missing == set()


def test_the_guard_sees_a_missing_row() -> None:
    # A negative control: a name that is nowhere in the docs is reported.
    assert "no_such_field" not in documented("copilot.md")
    assert {"stop_reason", "Turn.role", "tool_was_called_with"} <= documented("copilot.md")
