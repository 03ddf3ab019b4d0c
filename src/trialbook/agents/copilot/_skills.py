"""Skill discovery for explicit skill directories, checked before the prompt is sent.

A skill the author put in a skill directory but that Copilot does not list (or lists as disabled without
being asked to) would make every trial quietly test the wrong thing, so such a trial stops before any model
request. What the SDK listed is kept as evidence either way; it says a skill was available, never that it
was read or followed.

The skills are loaded through the SDK's reload call first, because only that call returns Copilot's own
load diagnostics (``failed to parse YAML frontmatter: ...``); a skill that is not listed then carries the
reason Copilot gave, which says what to fix far better than "not listed" alone.
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


def _diagnostic_path(message: str) -> tuple[str, ...] | None:
    """The path parts a Copilot diagnostic starts with (``skills/x/SKILL.md: ...``), ``..`` parts dropped."""
    head, sep, _ = message.partition(": ")
    if not sep or not head.endswith("SKILL.md"):
        return None
    return tuple(part for part in Path(head).parts if part not in (".", "..", "/"))


def _about(message: str, path: str) -> bool:
    """Whether a diagnostic names ``path`` (Copilot writes it relative to a folder it chooses)."""
    parts = _diagnostic_path(message)
    if not parts:
        return False
    return Path(path).resolve().parts[-len(parts) :] == parts


async def _reload(session: Any) -> tuple[list[str], list[str], str | None]:
    """Copilot's own skill-load errors and warnings, or why they could not be had."""
    try:
        diagnostics = await session.rpc.skills.reload()
    except Exception as exc:  # an older CLI lacks the call; the listing still decides
        return [], [], f"Copilot's skill diagnostics are unavailable: {exc}"
    errors = [str(e) for e in getattr(diagnostics, "errors", []) or []]
    warnings = [str(w) for w in getattr(diagnostics, "warnings", []) or []]
    return errors, warnings, None


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

    ``errors`` block the trial: a skill on disk that the SDK did not list (with Copilot's own diagnostic
    for that file when it gave one), or one it lists as disabled although ``disabled`` does not name it.
    Copilot's diagnostics about other files, and its load warnings, become ``warnings``. ``complete`` is
    ``False`` when the SDK could not be asked for the list.
    """
    wanted, warnings, errors = expected_skills(directories)
    sdk_errors, sdk_warnings, unavailable = await _reload(session)
    if unavailable is not None:
        warnings.append(unavailable)
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
    explained: set[str] = set()
    for name, path in wanted.items():
        skill = by_name.get(name)
        if skill is None:
            reasons = [m for m in sdk_errors + sdk_warnings if _about(m, path)]
            explained.update(reasons)
            why = f"; Copilot reported: {'; '.join(reasons)}" if reasons else ""
            errors.append(f"skill {name!r} ({path}) is not listed by Copilot{why}")
        elif not skill.enabled and name not in disabled:
            errors.append(f"skill {name!r} is disabled but not named in disabled_skills")
    warnings.extend(f"Copilot reported: {m}" for m in sdk_errors + sdk_warnings if m not in explained)
    for name in disabled:
        if name not in by_name:
            warnings.append(f"disabled_skills names {name!r}, which no skill directory provides")
    return SkillDiscovery(skills, tuple(warnings), tuple(errors), True)
