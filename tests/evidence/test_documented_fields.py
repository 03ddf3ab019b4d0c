"""Every CopilotResult field and helper, and every field of the records inside it, is documented with its
rule for unknown values.

The tables in docs/copilot.md and docs/pytest-plugin.md are what users read to learn what unknown looks
like; a field added to the dataclasses without a row (or with a row that leaves the rule out) would be a
field nobody knows how to read, and a row for a name that no longer exists sends readers after nothing.
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
BY_NAME = {cls.__name__: cls for cls in INSIDE}

RESULT_TABLE = {
    "copilot.md": "## Every field and helper, and what unknown looks like",
    "pytest-plugin.md": "### What a `CopilotResult` holds",
}
RECORDS_TABLE = ("copilot.md", "### The records inside a result")


def table(page: str, heading: str) -> list[list[str]]:
    """The body rows (cells stripped) of the first table after ``heading`` on ``page``."""
    lines = (DOCS / page).read_text().splitlines()
    assert heading in lines, f"docs/{page} has no heading {heading!r}"
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
        elif rows:
            break
    assert len(rows) > 2, f"docs/{page}: no table under {heading!r}"
    return rows[2:]  # the header and the --- line


def names_in(cell: str) -> list[tuple[str | None, str]]:
    """``(record class or None, name)`` for each code span of a first cell; ``Type.a``, ``b`` are Type's."""
    owner: str | None = None
    found: list[tuple[str | None, str]] = []
    for span in re.findall(r"`([^`]+)`", cell):
        name = re.sub(r"\(.*\)$", "", span)
        if "." in name:
            owner, name = name.split(".", 1)
        found.append((owner, name))
    return found


def rules(page: str, heading: str) -> dict[tuple[str | None, str], str]:
    """Each documented name and the rule (the last cell) its row gives for unknown or absent values."""
    documented: dict[tuple[str | None, str], str] = {}
    for row in table(page, heading):
        for key in names_in(row[0]):
            documented[key] = row[-1]
    return documented


def public(cls: type) -> set[str]:
    """Fields, properties and methods a reader of ``cls`` can use."""
    names = {f.name for f in dataclasses.fields(cls)}
    names |= {n for n in dir(cls) if not n.startswith("_") and n not in dir(object)}
    return names


def everything() -> dict[tuple[str | None, str], str]:
    return {**rules("copilot.md", RESULT_TABLE["copilot.md"]), **rules(*RECORDS_TABLE)}


@pytest.mark.parametrize("page", sorted(RESULT_TABLE))
def test_every_copilot_result_name_has_a_row_with_its_unknown_rule(page: str) -> None:
    documented = rules(page, RESULT_TABLE[page])
    missing = sorted(name for name in public(CopilotResult) if (None, name) not in documented)
    assert missing == [], f"docs/{page}: no row for these CopilotResult names"
    ruleless = sorted(name for name in public(CopilotResult) if len(documented[None, name]) < 10)
    assert ruleless == [], f"docs/{page}: these rows say nothing about unknown values"


def test_every_field_of_the_records_inside_has_a_row_with_its_unknown_rule() -> None:
    documented = everything()
    missing = sorted(
        f"{cls.__name__}.{name}"
        for cls in INSIDE
        for name in public(cls) - {"DERIVED"}
        if (cls.__name__, name) not in documented
    )
    assert missing == []
    assert all(len(rule) >= 10 for rule in documented.values())


@pytest.mark.parametrize("page", sorted(RESULT_TABLE))
def test_no_row_names_something_that_does_not_exist(page: str) -> None:
    documented = rules(page, RESULT_TABLE[page])
    if page == RECORDS_TABLE[0]:
        documented |= rules(*RECORDS_TABLE)
    stale = sorted(
        f"{owner}.{name}" if owner else name
        for owner, name in documented
        if name not in (public(BY_NAME[owner]) if owner in BY_NAME else public(CopilotResult))
    )
    assert stale == []


def test_the_guard_sees_a_missing_row_and_a_missing_rule() -> None:
    # Negative controls: the parser reads the tables it is meant to, and an empty rule is caught.
    documented = everything()
    assert (None, "no_such_field") not in documented
    assert {(None, "stop_reason"), ("Turn", "role"), (None, "tool_was_called_with")} <= set(documented)
    assert ("ToolCall", "completion_received") in documented, "a bare name after Type.a is Type's"
    assert "`None` for a child session" in documented[None, "stop_reason"]
    assert names_in("| `a`, `T.b`, `c(x)` |") == [(None, "a"), ("T", "b"), ("T", "c")]
