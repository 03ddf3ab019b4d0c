"""Reading ``instructions:`` and ``skills:``: files and folders next to the eval, checked before any trial."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TypeVar

import yaml

from ..assertions import Assertion, Loaded
from ..sandbox import ALWAYS_EXCLUDED, special_kind
from ._bounds import YamlTooLarge, check_yaml_bounds
from ._context import Context
from ._inputs import (
    MAX_INSTRUCTION_BYTES,
    MAX_SKILL_BYTES,
    MAX_SKILL_FILES,
    InstructionFile,
    SkillFolder,
    conventional_place,
)
from ._nodes import Node
from ._problems import display_path

__all__ = ["check_loaded_names", "read_instructions", "read_skills"]

_INSTRUCTIONS_EXAMPLE = "instructions: [../AGENTS.md, {path: ../docs/AGENTS.md, to: AGENTS.md}]"
_SKILLS_EXAMPLE = "skills: [../.claude/skills/deploy]"
_T = TypeVar("_T")
# Patterns as strings, compiled (and cached by ``re``) on first use: only evals with skills or
# instruction files need them.
_SKILL_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
_FRONT_MATTER = r"(?s)\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)"


def _read_text(path: Path, what: str, written: str, limit: int) -> tuple[str | None, str | None]:
    """``(text, None)``, or ``(None, problem)`` for a missing, special, oversized or non-UTF-8 file."""
    try:
        info = path.stat()
    except OSError:
        return None, f"the {what} {written} does not exist"
    if not stat.S_ISREG(info.st_mode):
        return None, f"the {what} {written} is not a regular file"
    if info.st_size > limit:
        return None, f"the {what} {written} is {info.st_size:,} bytes, more than the limit of {limit:,}"
    try:
        # At most one byte past the limit: a file whose size says 0 (in /proc, say) may hold more.
        with path.open("rb") as handle:
            data = handle.read(limit + 1)
        if len(data) > limit:
            return None, f"the {what} {written} holds more than the limit of {limit:,} bytes"
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"the {what} {written} cannot be read as UTF-8 text ({type(exc).__name__})"
    if "\0" in text:
        return None, f"the {what} {written} holds a NUL byte"
    return text, None


def _check_to(to: str) -> str | None:
    """What is wrong with ``to`` as a place in the sandbox, or ``None``."""
    pure = PurePosixPath(to)
    if pure.is_absolute() or "\\" in to:
        return "is not a relative POSIX path"
    if any(part in ("..", ".") for part in to.split("/")) or to.endswith("/"):
        return "must name a file inside the sandbox, without '.' or '..' parts"
    if pure.parts[0] in ALWAYS_EXCLUDED:
        return f"is inside {pure.parts[0]}, which trialbook keeps out of sandboxes"
    return None


def _instruction(item: Node, field: str, ctx: Context) -> InstructionFile | None:
    to: str | None = None
    entries = item.mapping
    if entries is not None:
        ctx.read.only_keys(entries, field, ("path", "to"))
        if "path" not in entries:
            ctx.problems.add(item.line, f"{field}.path", "is missing", f"write e.g. {_INSTRUCTIONS_EXAMPLE}")
            return None
        written = ctx.read.string(entries["path"], f"{field}.path", _INSTRUCTIONS_EXAMPLE)
        if "to" in entries:
            to = ctx.read.string(entries["to"], f"{field}.to", _INSTRUCTIONS_EXAMPLE)
            problem = None if to is None else _check_to(to)
            if to is None or problem is not None:
                if problem is not None:
                    ctx.problems.add(
                        entries["to"].line, f"{field}.to", f"{to!r} {problem}", "e.g. to: AGENTS.md"
                    )
                return None
    else:
        written = ctx.read.string(item, field, _INSTRUCTIONS_EXAMPLE)
    if written is None:
        return None
    source = Path(ctx.folder, written).resolve()
    place = to or conventional_place(source.name)
    if place is None:
        fix = (
            "name it AGENTS.md, CLAUDE.md, copilot-instructions.md or NAME.instructions.md, or say where it "
            f"goes: {{path: {written}, to: AGENTS.md}}"
        )
        ctx.problems.add(item.line, field, f"trialbook does not know where {source.name} goes", fix)
        return None
    text, problem = _read_text(source, "instruction file", written, MAX_INSTRUCTION_BYTES)
    if problem is not None:
        fix = f"looked for {display_path(source)}; paths are relative to the eval file"
        ctx.problems.add(item.line, field, problem, fix)
        return None
    assert text is not None
    return InstructionFile(source=source, path=place, written=written, text=text)


def _read_unique(
    node: Node,
    ctx: Context,
    key: str,
    example: str,
    read_one: Callable[[Node, str, Context], _T | None],
    identity: Callable[[_T], str],
    clash: Callable[[_T, str], tuple[str, str]],
) -> tuple[_T, ...] | None:
    """Read a list whose entries must differ in ``identity``; ``clash`` words the problem and its fix."""
    items = ctx.read.sequence(node, key, example)
    if items is None:
        return None
    found: list[_T] = []
    first: dict[str, str] = {}
    for index, item in enumerate(items):
        field = f"{key}[{index}]"
        entry = read_one(item, field, ctx)
        if entry is None:
            continue
        if identity(entry) in first:
            ctx.problems.add(item.line, field, *clash(entry, first[identity(entry)]))
            continue
        first[identity(entry)] = field
        found.append(entry)
    return tuple(found) if len(found) == len(items) else None


def read_instructions(node: Node, ctx: Context) -> tuple[InstructionFile, ...] | None:
    """The declared instruction files, or ``None`` when any entry is wrong (each problem recorded)."""

    def clash(entry: InstructionFile, other: str) -> tuple[str, str]:
        fix = f"keep one of them, or place one elsewhere with {{path: {entry.written}, to: ...}}"
        return f"{entry.path} is already placed by {other}", fix

    return _read_unique(
        node, ctx, "instructions", _INSTRUCTIONS_EXAMPLE, _instruction, lambda e: e.path, clash
    )


def _front_matter(text: str) -> dict[str, object] | str:
    """The ``---`` block at the top of ``SKILL.md`` as a mapping, or what is wrong with it."""
    match = re.match(_FRONT_MATTER, text)
    if match is None:
        return {}
    try:
        # The eval file's own limits first: front matter nesting thousands deep would exhaust the
        # loader's recursion, and aliases could expand it without bound.
        check_yaml_bounds(match.group(1), yaml.SafeLoader)
        data = yaml.safe_load(match.group(1))
    except YamlTooLarge as exc:
        return f"its front matter is too large to read: {exc.problem}"
    except yaml.YAMLError as exc:
        return f"its front matter is not valid YAML ({str(exc).splitlines()[0]})"
    if data is None:
        return {}
    if not isinstance(data, dict):
        return "its front matter is not a mapping"
    return {str(key): value for key, value in data.items()}


def _tree_sha256(folder: Path) -> str | tuple[str, ...]:
    """A hash over the folder's relative paths and file contents, or the problems that prevent one."""
    digest = hashlib.sha256()
    files = total = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        base = Path(dirpath)
        # A link to a folder is listed among the folders (and not walked into): it is hashed as a link.
        links = [name for name in dirnames if (base / name).is_symlink()]
        for name in sorted([*filenames, *links]):
            path = base / name
            rel = path.relative_to(folder).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                digest.update(f"L {rel}\0{os.readlink(path)}\0".encode())
                continue
            kind = special_kind(info.st_mode)
            if kind is not None:
                return (f"holds {rel}, which is {kind}",)
            files, total = files + 1, total + info.st_size
            if files > MAX_SKILL_FILES or total > MAX_SKILL_BYTES:
                return (f"holds more than {MAX_SKILL_FILES:,} files or {MAX_SKILL_BYTES:,} bytes",)
            digest.update(f"F {rel} {'x' if info.st_mode & 0o111 else '-'}\0".encode())
            with open(path, "rb") as handle:
                digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()


def _skill(item: Node, field: str, ctx: Context) -> SkillFolder | None:
    written = ctx.read.string(item, field, _SKILLS_EXAMPLE)
    if written is None:
        return None
    folder = Path(ctx.folder, written).resolve()
    where = f"looked for {display_path(folder)}; paths are relative to the eval file"
    if not folder.is_dir():
        reason = "is not a folder" if folder.exists() else "does not exist"
        ctx.problems.add(item.line, field, f"the skill folder {written} {reason}", where)
        return None
    text, problem = _read_text(
        folder / "SKILL.md", "file", f"{written.rstrip('/')}/SKILL.md", MAX_INSTRUCTION_BYTES
    )
    if problem is not None:
        ctx.problems.add(item.line, field, problem, "a skill folder holds SKILL.md with name and description")
        return None
    assert text is not None
    meta = _front_matter(text)
    if isinstance(meta, str):
        ctx.problems.add(item.line, field, f"{written.rstrip('/')}/SKILL.md: {meta}", "fix the --- block")
        return None
    name = meta.get("name", folder.name)
    description = meta.get("description")
    if not isinstance(name, str) or not re.fullmatch(_SKILL_NAME, name):
        fix = "give SKILL.md a name: of letters, digits, '.', '_' and '-' (at most 64)"
        ctx.problems.add(item.line, field, f"the skill name {name!r} is not usable as a folder name", fix)
        return None
    tree = _tree_sha256(folder)
    if isinstance(tree, tuple):
        for problem in tree:
            ctx.problems.add(
                item.line, field, f"the skill folder {written} {problem}", "keep only the skill's files"
            )
        return None
    return SkillFolder(
        source=folder,
        name=name,
        written=written,
        description=description if isinstance(description, str) else None,
        skill_md=text,
        tree_sha256=tree,
    )


def read_skills(node: Node, ctx: Context) -> tuple[SkillFolder, ...] | None:
    """The declared skill folders, or ``None`` when any entry is wrong (each problem recorded)."""

    def clash(skill: SkillFolder, other: str) -> tuple[str, str]:
        fix = "two skills of one name would land in the same folder; keep one of them"
        return f"a skill named {skill.name} is already declared at {other}", fix

    return _read_unique(node, ctx, "skills", _SKILLS_EXAMPLE, _skill, lambda s: s.name, clash)


def check_loaded_names(
    assertions: tuple[Assertion, ...] | None,
    instructions: tuple[InstructionFile, ...] | None,
    skills: tuple[SkillFolder, ...] | None,
    ctx: Context,
) -> None:
    """Every ``loaded:`` check names a declared input: one that is not could never pass."""
    if assertions is None or instructions is None or skills is None:
        return  # the broken part was reported already
    names = [f.path for f in instructions] + [s.name for s in skills]
    for index, assertion in enumerate(assertions):
        if isinstance(assertion, Loaded) and assertion.name not in names:
            field = f"assert[{index}].loaded"
            declared = ", ".join(names) or "none"
            fix = f"name an instruction file by its sandbox path or a skill by name (declared: {declared})"
            ctx.problems.add(
                ctx.lines.get(f"assert[{index}]", 1), field, f"{assertion.name} is not declared", fix
            )
