"""Trigger eval scores in words, from their JSON form (the manifest's ``triggers``): terminal and Markdown.

Rendering from the JSON a run folder keeps lets every reader say the same thing: the run that scored the
queries, and a publish job that only reads what that run wrote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..scoring.comparison import format_p_value
from ..scoring.stats import COMPARE_ALPHA

__all__ = ["checked_group", "describe", "markdown_lines"]

_VERDICTS = ("pass", "fail", "error", "incomplete")


def _rate(rate: Mapping[str, Any]) -> str:
    value = rate.get("value")
    shown = "n/a" if not isinstance(value, int | float) else f"{value:.2f}"
    return f"{shown} ({rate.get('hits')}/{rate.get('total')})"


def _base(group: Mapping[str, Any]) -> str | None:
    base = group.get("base")
    if not isinstance(base, Mapping):
        return None
    head, before = group["score"], base["score"]
    parts = []
    for name in ("recall", "precision"):
        old, new = before[name], head[name]
        if old.get("value") == new.get("value"):
            continue
        change = f"{name} {_rate(old)} → {_rate(new)}"
        if old.get("total") and new.get("total"):  # an exact test needs trials on both sides
            p = float(base[f"{name}_p"])
            change += f", {format_p_value(p)} ({'significant' if p < COMPARE_ALPHA else 'not significant'})"
        parts.append(change)
    lost = [flip["id"] for flip in base.get("flipped", []) if flip.get("lost")]
    if lost:
        parts.append(f"{len(lost)} quer{'y' if len(lost) == 1 else 'ies'} lost: {', '.join(lost)}")
    return "vs base: " + ("; ".join(parts) if parts else "no change")


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: object) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _score_ok(score: object) -> bool:
    if not isinstance(score, Mapping) or not _count(score.get("unknown")) or not _number(score.get("f1")):
        return False
    rates = [score.get(name) for name in ("recall", "precision", "accuracy")]
    return all(
        isinstance(rate, Mapping) and _count(rate.get("hits")) and _count(rate.get("total"))
        and _number(rate.get("value"))
        for rate in rates
    )  # fmt: skip


def checked_group(item: object) -> Mapping[str, Any] | None:
    """``item`` when it has the shape :func:`describe` reads (a state file is data), else ``None``."""
    if not isinstance(item, Mapping):
        return None
    texts = [item.get(key) for key in ("eval", "agent", "skill")]
    lists = [item.get(key, []) for key in ("missing", "problems")]
    if not all(isinstance(text, str) for text in texts) or item.get("verdict") not in _VERDICTS:
        return None
    if not all(isinstance(found, list) and all(isinstance(x, str) for x in found) for found in lists):
        return None
    if not _score_ok(item.get("score")):
        return None
    base = item.get("base")
    if base is not None:
        flips = base.get("flipped") if isinstance(base, Mapping) else None
        if not isinstance(base, Mapping) or not _score_ok(base.get("score")) or not isinstance(flips, list):
            return None
        if not all(_number(base.get(f"{name}_p")) for name in ("recall", "precision")):
            return None
        if not all(isinstance(flip, Mapping) and isinstance(flip.get("id"), str) for flip in flips):
            return None
    return item


def describe(group: Mapping[str, Any]) -> str:
    """``recall 0.83 (5/6) · precision 1.00 (5/5) · F1 0.91 · pass``, and the base comparison if any."""
    score = group["score"]
    f1 = score.get("f1")
    parts = [f"recall {_rate(score['recall'])}", f"precision {_rate(score['precision'])}"]
    parts.append(f"F1 {'n/a' if not isinstance(f1, int | float) else f'{f1:.2f}'}")
    if score.get("unknown"):
        parts.append(f"{score['unknown']} unknown")
    missing = group.get("missing") or []
    if missing:
        parts.append(f"{len(missing)} quer{'y' if len(missing) == 1 else 'ies'} not run")
    problems = group.get("problems") or []
    parts.append(str(group["verdict"]) + (f" ({'; '.join(problems)})" if problems else ""))
    base = _base(group)
    if base is not None:
        parts.append(base)
    return " · ".join(parts)


def markdown_lines(groups: Sequence[Mapping[str, Any]], text: Any) -> list[str]:
    """The job summary's and PR comment's section; ``text`` escapes a value for Markdown."""
    if not groups:
        return []
    lines = ["", "### Skill triggering", ""]
    for group in groups:
        lines.append(
            f"- {text(group['eval'])} × {text(group['agent'])}, skill {text(group['skill'])}: "
            f"{text(describe(group))}"
        )
    return [
        *lines,
        "",
        "Each query ran as its own eval; “used” is read from the agent's tool calls (its skill tool, or a "
        "read of SKILL.md), never from its words. Recall: of the trials that should use the skill, the "
        "share that did; precision: of the trials that used it, the share that should have. The base "
        f"comparison is a two-sided Fisher exact test (significant at p < {COMPARE_ALPHA:g}).",
    ]
