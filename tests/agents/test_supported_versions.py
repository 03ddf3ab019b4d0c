"""docs/agents.md's supported-versions table agrees with the versions trialbook's tests pin."""

from __future__ import annotations

import re
from pathlib import Path

from tests.clis import AGENT_PACKAGES, PINNED

DOCS = Path(__file__).resolve().parents[2] / "docs/agents.md"
_ROW = re.compile(r"^\| `([\w-]+)` \| `(@[\w/-]+)` \| ([\d.]+) \| ([\d.]+) \|$", re.M)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def test_every_agent_cli_has_a_row_whose_oldest_is_the_pin_and_whose_newest_is_not_older() -> None:
    section = DOCS.read_text().split("## Supported versions", 1)[1].split("\n## ", 1)[0]
    rows = {package: (oldest, newest) for _, package, oldest, newest in _ROW.findall(section)}
    assert sorted(rows) == sorted(AGENT_PACKAGES)
    for package, (oldest, newest) in rows.items():
        assert oldest == PINNED[package][0], f"{package}: the table's oldest is not the pinned version"
        assert _key(newest) >= _key(oldest)
