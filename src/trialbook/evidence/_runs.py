"""The names of kept runs: a run folder's id and the ``latest`` link that names the newest one.

The runner writes them and the report and rescore commands read them; keeping the names here lets the
readers find a run without importing the runner.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["LATEST", "RUN_ID_PATTERN", "latest_run"]

RUN_ID_PATTERN = r"\d{8}T\d{6}Z-[0-9a-f]{6}"
"""A run's id: its UTC start time and six random hex digits, e.g. ``20261205T131500Z-3fa9c1``."""

LATEST = "latest"
"""The link (or, where links are refused, the text file) in a runs folder that names the newest run."""

_RUN_ID = re.compile(rf"^{RUN_ID_PATTERN}$")


def latest_run(root: Path) -> Path | None:
    """The folder ``root/latest`` names, or ``None`` when there is no kept run."""
    link = root / LATEST
    if link.is_symlink():
        target = root / os.readlink(link)
    elif link.is_file():
        target = root / link.read_text(encoding="utf-8").strip()
    else:
        return None
    return target if target.is_dir() and _RUN_ID.match(target.name) else None
