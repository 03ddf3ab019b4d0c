"""Skill discovery for explicit skill directories, checked before the prompt is sent.

A skill the author put in a skill directory but that Copilot does not list (or lists as disabled without
being asked to) would make every trial quietly test the wrong thing, so such a trial stops before any model
request. What the SDK listed is kept as evidence either way; it says a skill was available, never that it
was read or followed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ...evidence import DiscoveredSkill, SkillDiscovery

__all__ = ["discover_skills", "expected_skills"]


def _skill_name(skill_file: Path) -> str:
    text = skill_file.read_text(encoding="utf-8", errors="replace")
    if text.startswith("---"):
        head = text[3:].split("\n---", 1)[0]
        try:
            meta = yaml.safe_load(head)
        except yaml.YAMLError:
            meta = None
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            return str(meta["name"])
    return skill_file.parent.name


def expected_skills(directories: tuple[str, ...]) -> tuple[dict[str, str], list[str], list[str]]:
    """Skills on disk by name (``<dir>/<skill>/SKILL.md``), plus local warnings and errors."""
    found: dict[str, str] = {}
    warnings: list[str] = []
    errors: list[str] = []
    for directory in directories:
        root = Path(directory)
        if not root.is_dir():
            errors.append(f"skill directory {directory} does not exist")
            continue
        for child in sorted(root.iterdir()):
            if not child.is_dir():
                continue
            skill_file = child / "SKILL.md"
            if skill_file.is_file():
                found[_skill_name(skill_file)] = str(skill_file)
            else:
                warnings.append(f"{child} has no SKILL.md and is not a skill")
    return found, warnings, errors


def _inside(path: str | None, directories: tuple[str, ...]) -> bool:
    if path is None:
        return False
    resolved = Path(path).resolve()
    return any(resolved.is_relative_to(Path(d).resolve()) for d in directories)


def _discovered(skill: Any) -> DiscoveredSkill:
    source = getattr(skill, "source", None)
    return DiscoveredSkill(
        name=str(skill.name),
        description=getattr(skill, "description", None),
        source=getattr(source, "value", source),
        enabled=bool(getattr(skill, "enabled", False)),
        user_invocable=getattr(skill, "user_invocable", None),
        path=getattr(skill, "path", None),
        plugin_name=getattr(skill, "plugin_name", None),
        command_name=getattr(skill, "command_name", None),
        argument_hint=getattr(skill, "argument_hint", None),
    )


async def discover_skills(
    session: Any, directories: tuple[str, ...], disabled: tuple[str, ...]
) -> SkillDiscovery:
    """Ask the session which skills it has and compare with the explicit directories.

    ``errors`` block the trial: a skill on disk that the SDK did not list, or one it lists as disabled
    although ``disabled`` does not name it. ``complete`` is ``False`` when the SDK could not be asked.
    """
    wanted, warnings, errors = expected_skills(directories)
    try:
        listing = await session.rpc.skills.list()
    except Exception as exc:  # the SDK raises plain exceptions for RPC failures
        return SkillDiscovery((), tuple(warnings), (*errors, f"skill listing failed: {exc}"), False)
    skills = tuple(
        _discovered(s)
        for s in getattr(listing, "skills", []) or []
        if _inside(getattr(s, "path", None), directories)
    )
    by_name = {skill.name: skill for skill in skills}
    for name, path in wanted.items():
        skill = by_name.get(name)
        if skill is None:
            errors.append(f"skill {name!r} ({path}) is not listed by Copilot")
        elif not skill.enabled and name not in disabled:
            errors.append(f"skill {name!r} is disabled but not named in disabled_skills")
    for name in disabled:
        if name not in by_name:
            warnings.append(f"disabled_skills names {name!r}, which no skill directory provides")
    return SkillDiscovery(skills, tuple(warnings), tuple(errors), True)
