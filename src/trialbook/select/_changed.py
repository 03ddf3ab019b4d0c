"""Changed-only runs: which evals differ from the base ref, and why."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pygit2

from ..evalfiles import EvalSpec
from ..sandbox import TemplateFilter
from ._git import BaseTree

__all__ = ["changed_evals"]


def _changed_file(base: BaseTree, path: Path) -> str | None:
    rel = base.relative(path)
    if rel is None:
        return f"{path} is outside the repository"
    old = base.blob_id(rel)
    if old is None:
        return f"{rel} is new since {base.ref}"
    if pygit2.hashfile(str(path)) != old:
        return f"{rel} changed"
    return None


def _changed_template(
    base: BaseTree, template: Path, exclude: tuple[str, ...], what: str = "template"
) -> str | None:
    rel = base.relative(template)
    if rel is None:
        return f"{what} {template} is outside the repository"
    keep = TemplateFilter.of(exclude)
    before = {path: blob for path, blob in base.file_ids(rel).items() if keep.kept(path, is_dir=False)}
    now = {
        p.relative_to(template).as_posix(): pygit2.hashfile(str(p))
        for p in sorted(template.rglob("*"))
        if p.is_file() and not p.is_symlink() and keep.kept(p.relative_to(template).as_posix(), is_dir=False)
    }
    differing = sorted(set(before) ^ set(now) | {k for k in set(before) & set(now) if before[k] != now[k]})
    if differing:
        return f"{what} {rel} changed ({len(differing)} file(s), e.g. {differing[0]})"
    return None


def _changed_inputs(base: BaseTree, spec: EvalSpec) -> str | None:
    """Why the eval's declared instruction files or skills differ from the base, or ``None``."""
    for item in spec.instructions:
        reason = _changed_file(base, item.source)
        if reason is not None:
            return f"instruction file: {reason}"
    for skill in spec.skills:
        reason = _changed_template(base, skill.source, (), what="skill")
        if reason is not None:
            return reason
    return None


def changed_evals(specs: Sequence[EvalSpec], base: BaseTree) -> tuple[dict[str, str], dict[str, str]]:
    """Split evals into ``(changed, unchanged)``, each mapping an eval id to the reason.

    An eval counts as changed when its eval file, its prompt file, its sandbox template or one of its
    declared instruction files and skill folders differs from the base (or did not exist there): a pull
    request that edits only ``AGENTS.md`` changes what the eval tests. With the eval file unchanged, the
    params are too, so the rendered prompt differs exactly when the prompt file does.
    """
    changed: dict[str, str] = {}
    unchanged: dict[str, str] = {}
    templates: dict[tuple[Path, tuple[str, ...]], str | None] = {}  # evals often share one: compare once
    for spec in specs:
        reason = _changed_file(base, spec.source)
        if reason is None and spec.prompt_path is not None:
            reason = _changed_file(base, spec.prompt_path)
            reason = f"prompt: {reason}" if reason else None
        if reason is None and spec.template is not None:
            key = (spec.template, spec.template_exclude)
            if key not in templates:
                templates[key] = _changed_template(base, spec.template, spec.template_exclude)
            reason = templates[key]
        if reason is None:
            reason = _changed_inputs(base, spec)
        if reason is None:
            unchanged[spec.id] = f"unchanged since {base.ref}"
        else:
            changed[spec.id] = reason
    return changed, unchanged
