"""Skills and instruction files as agents find them in a repository, checked without running an agent.

A skill's ``description`` is what an agent reads on every request to decide whether to load it, so a
malformed front matter, an over-long description or two skills sharing one description silently change
which skill an agent picks. ``trialbook skills check`` reports those before any trial is paid for.
"""

from __future__ import annotations

from ._find import SKILL_LOCATIONS, find_instruction_files, find_skill_folders
from ._rules import (
    MAX_COMPATIBILITY,
    MAX_DESCRIPTION,
    MAX_NAME,
    Problem,
    Skill,
    clashes,
    estimate_tokens,
    read_skill,
)

__all__ = [
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "SKILL_LOCATIONS",
    "Problem",
    "Skill",
    "clashes",
    "estimate_tokens",
    "find_instruction_files",
    "find_skill_folders",
    "read_skill",
]
