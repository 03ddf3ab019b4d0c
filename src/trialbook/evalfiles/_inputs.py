"""Instruction files and skill folders an eval declares: what they are, and the eval without some of them.

Teams ship ``AGENTS.md``, ``CLAUDE.md``, ``.github/copilot-instructions.md``, ``*.instructions.md`` and
skills (folders holding ``SKILL.md``) next to their code. An eval names them so every trial's sandbox holds
them where each agent looks, and so a second arm can run without them to measure what they change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._model import EvalSpec

__all__ = [
    "MAX_INSTRUCTION_BYTES",
    "MAX_SKILL_BYTES",
    "MAX_SKILL_FILES",
    "InstructionFile",
    "SkillFolder",
    "conventional_place",
    "input_names",
    "without_inputs",
]

MAX_INSTRUCTION_BYTES = 256 * 1024
"""An instruction file larger than this is refused: agents cut or skip such files, and the audit compares
each request against every declared text."""

MAX_SKILL_FILES = 1000
"""Files a skill folder may hold (scripts, references, assets)."""

MAX_SKILL_BYTES = 16 * 1024 * 1024
"""Bytes a skill folder may hold altogether; it is copied into every trial's sandbox."""


def conventional_place(name: str) -> str | None:
    """Where a file named ``name`` lives in a repository so that agents find it, or ``None``.

    ``AGENTS.md`` and ``CLAUDE.md`` sit at the root, ``copilot-instructions.md`` in ``.github/`` and
    path-specific ``*.instructions.md`` files in ``.github/instructions/``.
    """
    if name in ("AGENTS.md", "CLAUDE.md"):
        return name
    if name == "copilot-instructions.md":
        return ".github/copilot-instructions.md"
    if name.endswith(".instructions.md") and name != ".instructions.md":
        return f".github/instructions/{name}"
    return None


@dataclass(frozen=True)
class InstructionFile:
    """One declared instruction file.

    ``path`` is where it is placed in each sandbox (POSIX, relative to the sandbox root), which is also
    how evidence, assertions and ``compare`` name it; ``written`` is the path as the eval file gave it.
    """

    source: Path
    path: str
    written: str
    text: str = field(repr=False)

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the file's UTF-8 text, as evidence records it."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SkillFolder:
    """One declared skill: a folder holding ``SKILL.md``, placed whole where each agent finds skills.

    ``name`` is the ``name:`` of ``SKILL.md``'s front matter, else the folder's name; ``tree_sha256``
    covers every file of the folder, so editing a script of the skill changes the cache key.
    """

    source: Path
    name: str
    written: str
    description: str | None
    skill_md: str = field(repr=False)
    tree_sha256: str = ""

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of ``SKILL.md``'s UTF-8 text, as evidence records it."""
        return hashlib.sha256(self.skill_md.encode("utf-8")).hexdigest()


def _names(item: InstructionFile | SkillFolder) -> tuple[str, ...]:
    main = item.path if isinstance(item, InstructionFile) else item.name
    written = PurePosixPath(item.written).as_posix().rstrip("/")
    return (main, written) if written != main else (main,)


def input_names(spec: EvalSpec) -> tuple[str, ...]:
    """How the eval's inputs are named: instruction files by sandbox path, then skills by name."""
    return tuple(f.path for f in spec.instructions) + tuple(s.name for s in spec.skills)


def without_inputs(spec: EvalSpec, names: Collection[str] | None = None) -> EvalSpec:
    """``spec`` with the named instruction files and skills dropped; all of them when ``names`` is None.

    A name is an instruction file's sandbox path (``AGENTS.md``, ``.github/copilot-instructions.md``) or
    a skill's name, or either as the eval file wrote it. Everything else of the eval stays as it is.

    Raises:
        ValueError: a name matches no declared input; the message lists the names there are.
    """
    if names is None:
        return replace(spec, instructions=(), skills=())
    wanted = set(names)
    items: tuple[InstructionFile | SkillFolder, ...] = (*spec.instructions, *spec.skills)
    known = {name for item in items for name in _names(item)}
    unknown = sorted(wanted - known)
    if unknown:
        there = ", ".join(input_names(spec)) or "none"
        raise ValueError(
            f"{', '.join(unknown)}: not a declared instruction file or skill (declared: {there})"
        )
    return replace(
        spec,
        instructions=tuple(f for f in spec.instructions if not wanted.intersection(_names(f))),
        skills=tuple(s for s in spec.skills if not wanted.intersection(_names(s))),
    )
