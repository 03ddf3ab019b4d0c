"""Placing an eval's instruction files and skills into a trial's sandbox, and their row in its evidence.

Instruction files go where their name says (the same place for every agent, as in a repository); skills go
into the folder where the trial's agent finds project skills, which each adapter names as
``SKILLS_FOLDER``. An adapter that does not audit its requests leaves ``instructions_loaded`` empty, and the
trial's evidence then lists every declared input as ``loaded: null``: not known, never assumed.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

from ..agents import Agent
from ..evalfiles import InstructionFile, SkillFolder
from ..evidence import AgentResult, DeclaredInput, InstructionLoad
from ..skills import find_instruction_files

__all__ = [
    "DEFAULT_SKILLS_FOLDER",
    "place_inputs",
    "placed_roots",
    "placed_sources",
    "skills_folder",
    "with_loading",
]

DEFAULT_SKILLS_FOLDER = ".agents/skills"
"""Where skills go for agents that name no folder of their own: the folder shared by several agents."""


def skills_folder(agent: Agent) -> str:
    """The sandbox-relative folder ``agent`` discovers project skills in."""
    folder = getattr(agent, "SKILLS_FOLDER", None)
    return folder if isinstance(folder, str) and folder else DEFAULT_SKILLS_FOLDER


def _inside(workdir: Path, relative: str) -> Path:
    """Where ``relative`` is placed: its folder resolved, its own name not (a link there is replaced)."""
    path = workdir / relative
    folder = path.parent.resolve()
    if not folder.is_relative_to(workdir.resolve()):
        # A template symlink (.github -> /elsewhere) must not carry a placed file out of the sandbox.
        raise ValueError(
            f"{relative} would be placed outside the sandbox (through a symlink in the template)"
        )
    return folder / path.name


def _clear(target: Path) -> None:
    """Remove what the template holds at ``target``; a symlink is removed itself, never followed."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)


def place_inputs(
    workdir: Path, instructions: tuple[InstructionFile, ...], skills: tuple[SkillFolder, ...], folder: str
) -> tuple[DeclaredInput, ...]:
    """Copy the inputs into ``workdir`` (over template files of the same path) and describe them.

    The text written is the text that was loaded and hashed with the eval, so the evidence's hash is of
    what the agent could read. Each instruction file and each skill's ``SKILL.md`` is written as a regular
    file of the sandbox, also where the declared file or the template's file at that path is a symlink:
    an agent editing it edits its own copy, and placing never writes through a link.

    Raises:
        ValueError: a path would leave the sandbox through a symlink the template holds.
    """
    # Skills first: an instruction file the eval places inside a skill's folder (``to:``) lands over
    # the skill's copy instead of being removed with what that folder held before.
    skill_rows: list[DeclaredInput] = []
    for skill in skills:
        relative = f"{folder}/{skill.name}"
        target = _inside(workdir, relative)
        _clear(target)
        shutil.copytree(skill.source, target, symlinks=True)
        skill_md = target / "SKILL.md"
        skill_md.unlink()  # copied as it is in the skill's folder, possibly a link to a file elsewhere
        skill_md.write_text(skill.skill_md, encoding="utf-8")
        skill_rows.append(DeclaredInput.skill(relative, skill.sha256, skill.description, skill.skill_md))
    declared: list[DeclaredInput] = []
    for item in instructions:
        target = _inside(workdir, item.path)
        target.parent.mkdir(parents=True, exist_ok=True)
        _clear(target)
        target.write_text(item.text, encoding="utf-8")
        declared.append(DeclaredInput.instruction_file(item.path, item.sha256, item.text))
    declared += skill_rows
    return tuple(_named_where_shared(workdir, declared))


def _named_where_shared(workdir: Path, declared: list[DeclaredInput]) -> list[DeclaredInput]:
    """Mark each placed instruction file whose text another instruction file of the sandbox also holds.

    ``AGENTS.md`` placed beside a template's ``CLAUDE.md`` of the same words: Claude Code sends the words
    from ``CLAUDE.md``, and the text alone would count ``AGENTS.md`` as loaded. Such a file is decided by
    the file name the request gives beside the text instead (see ``DeclaredInput.named``).
    """
    files, _ = find_instruction_files(workdir)
    bodies: dict[str, list[str]] = {}
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        body = DeclaredInput.instruction_file("", "", text).needles
        if body:
            bodies.setdefault(body[0], []).append(path.relative_to(workdir).as_posix())
    marked = []
    for item in declared:
        others = [] if item.kind != "instructions" or not item.needles else bodies.get(item.needles[0], [])
        names = tuple(sorted({Path(other).name for other in others if other != item.path}))
        marked.append(replace(item, named=Path(item.path).name, shared_with=names) if names else item)
    return marked


def placed_sources(
    instructions: tuple[InstructionFile, ...], skills: tuple[SkillFolder, ...], folder: str
) -> dict[str, Path]:
    """Each placed file's sandbox path and the file it came from.

    The sandbox's change record starts placed files from these, so it shows only what the agent did.
    ``SKILL.md`` is named by the file it leads to when it is a link, as it was placed as a regular file.
    """
    found: dict[str, Path] = {}
    for skill in skills:
        for path in sorted(skill.source.rglob("*")):
            if path.is_file() or path.is_symlink():
                found[f"{folder}/{skill.name}/{path.relative_to(skill.source).as_posix()}"] = path
        found[f"{folder}/{skill.name}/SKILL.md"] = (skill.source / "SKILL.md").resolve()
    found.update((item.path, item.source) for item in instructions)  # placed last, as in place_inputs
    return found


def placed_roots(
    instructions: tuple[InstructionFile, ...], skills: tuple[SkillFolder, ...], folder: str
) -> tuple[str, ...]:
    """The sandbox paths placing replaced: whatever the template held there (and below) is gone."""
    return (*(item.path for item in instructions), *(f"{folder}/{skill.name}" for skill in skills))


def with_loading(result: AgentResult, declared: tuple[DeclaredInput, ...]) -> AgentResult:
    """``result`` with one ``instructions_loaded`` row per declared input.

    The adapter's own decision is kept when it made one for exactly these inputs; anything else (no
    decision, or rows for other paths) becomes ``null`` rows, since a wrong row would be worse than none.
    """
    rows = result.instructions_loaded
    if [(r.path, r.sha256) for r in rows] == [(d.path, d.sha256) for d in declared]:
        return result
    unknown = tuple(InstructionLoad(d.path, d.kind, d.sha256, None) for d in declared)
    return replace(result, instructions_loaded=unknown)
