"""Finding the skill folders and instruction files a repository offers each agent (reads the disk)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["MAX_FOUND", "SKILL_LOCATIONS", "find_instruction_files", "find_skill_folders"]

SKILL_LOCATIONS = (".claude/skills", ".github/skills", ".agents/skills")
"""Where Claude Code, Copilot and Codex discover a repository's skills, one folder per skill."""

_INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md")
_INSTRUCTIONS_FOLDER = ".github/instructions"

MAX_FOUND = 1000
"""Skill folders (and, apart, instruction files) looked at; a repository holds a handful. Past it the
check says what it left out instead of walking an unbounded tree."""


def find_skill_folders(root: Path) -> tuple[list[Path], bool]:
    """Every folder directly under a known skills location, sorted; and whether ``MAX_FOUND`` cut it."""
    found: list[Path] = []
    for location in SKILL_LOCATIONS:
        base = root / location
        if not base.is_dir():
            continue
        with os.scandir(base) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir():
                    if len(found) == MAX_FOUND:
                        return found, True
                    found.append(Path(entry.path))
    return found, False


def find_instruction_files(root: Path) -> tuple[list[Path], bool]:
    """The instruction files agents load on every request; and whether ``MAX_FOUND`` cut the list."""
    found = [root / name for name in _INSTRUCTION_FILES if (root / name).is_file()]
    folder = root / _INSTRUCTIONS_FOLDER
    if folder.is_dir():
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".instructions.md"):
                    if len(found) == MAX_FOUND:
                        return found, True
                    found.append(Path(dirpath, name))
    return found, False
