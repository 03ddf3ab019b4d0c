"""``trialbook skills check``: the repository's skills and instruction files, checked without an agent."""

from __future__ import annotations

import stat
from pathlib import Path

import click

from ..errors import ConfigError
from ..skills import (
    Problem,
    Skill,
    clashes,
    estimate_tokens,
    find_instruction_files,
    find_skill_folders,
    read_skill,
)

__all__ = ["skills_command"]

MAX_FILE_BYTES = 1024 * 1024
"""A SKILL.md or instruction file read for the check; larger ones are reported, not read."""


def _read(path: Path, shown: str) -> str | Problem:
    """The file's text, or why it cannot be checked."""
    fix = "keep it a regular UTF-8 text file of at most 1 MiB"
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode):
            return Problem(shown, None, "file", "is not a regular file", fix)
        if info.st_size > MAX_FILE_BYTES:
            return Problem(shown, None, "file", f"is {info.st_size:,} bytes", fix)
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1).decode("utf-8")
    except UnicodeDecodeError:
        return Problem(shown, None, "file", "is not UTF-8 text", fix)
    except OSError as exc:
        return Problem(shown, None, "file", f"cannot be read ({exc.strerror})", fix)


def _skills(root: Path) -> tuple[list[Skill], list[Problem], list[tuple[int, str]], bool]:
    """Every skill found, the problems, the ``(≈tokens, what)`` rows, and whether the search was cut."""
    folders, cut = find_skill_folders(root)
    skills: list[Skill] = []
    problems: list[Problem] = []
    rows: list[tuple[int, str]] = []
    for folder in folders:
        shown = f"{folder.relative_to(root).as_posix()}/SKILL.md"
        if not (folder / "SKILL.md").exists():
            fix = "add SKILL.md with name: and description:, or remove the folder"
            problems.append(Problem(shown, None, "SKILL.md", "the skill folder holds no SKILL.md", fix))
            continue
        text = _read(folder / "SKILL.md", shown)
        if isinstance(text, Problem):
            problems.append(text)
            continue
        skill, found = read_skill(shown, folder.name, text)
        problems += found
        if skill is not None:
            skills.append(skill)
            rows.append((estimate_tokens(skill.description), f"{shown} (description)"))
    problems += clashes(skills)
    return skills, problems, rows, cut


@click.group("skills")
def skills_command() -> None:
    """Check the repository's skills and instruction files without running an agent."""


@skills_command.command("check")
@click.argument("root", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
def check_command(root: Path) -> None:
    """Check every skill under .claude/skills, .github/skills and .agents/skills of ROOT (default: .).

    Each SKILL.md must have a front matter with a name (matching its folder) and a description within
    the Agent Skills limits; no two skills may share a description. The approximate token size of every
    description and instruction file is listed: what an agent pays on every request. Exit code 2, with
    file:line for each problem, when anything is wrong.
    """
    if not root.is_dir():
        raise ConfigError(f"{root}: not a folder (give the repository's root, or run inside it)")
    skills, problems, rows, cut = _skills(root)
    instructions, cut_instructions = find_instruction_files(root)
    for path in instructions:
        shown = path.relative_to(root).as_posix()
        text = _read(path, shown)
        if isinstance(text, Problem):
            problems.append(text)
            continue
        rows.append((estimate_tokens(text), shown))
    click.echo(f"{len(skills)} skill(s), {len(instructions)} instruction file(s) in {root}")
    if rows:
        click.echo(f"{'≈tokens':>8}  file (tokens estimated as UTF-8 bytes / 4)")
        for tokens, what in rows:
            click.echo(f"{tokens:>8,}  {what}")
    for what, was_cut in (("skill folders", cut), ("instruction files", cut_instructions)):
        if was_cut:
            click.echo(f"warning: only the first 1,000 {what} were checked", err=True)
    if problems:
        raise ConfigError([str(problem) for problem in problems])
