"""One agent at two versions on the same evals, as the summary and the PR comment show it (pure).

The run writes each compared pair as JSON (``manifest.json``'s ``versions``, and ``ci.json`` for the
publish step, where it is data another job wrote: :func:`checked_drift` accepts only what trialbook
writes). See docs/agents.md, "Agent versions side by side".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["checked_drift", "describe", "headlines", "markdown_lines"]


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _run_ok(run: object) -> bool:
    if not isinstance(run, Mapping) or not isinstance(run.get("label"), str):
        return False
    if not all(value is None or isinstance(value, str) for value in (run.get("version"), run.get("verdict"))):
        return False
    return _count(run.get("passed")) and _count(run.get("trials"))


def checked_drift(item: object) -> Mapping[str, Any] | None:
    """``item`` when it has the shape a run writes, else ``None``."""
    if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("id", "agent")):
        return None
    runs, p_value = item.get("runs"), item.get("p_value")
    if not isinstance(runs, list) or len(runs) != 2 or not all(_run_ok(run) for run in runs):
        return None
    if isinstance(p_value, bool) or not isinstance(p_value, int | float) or not 0 <= p_value <= 1:
        return None
    regressed = item.get("regressed")
    if not isinstance(item.get("differs"), bool) or not (regressed is None or isinstance(regressed, str)):
        return None
    return item


def _run_text(run: Mapping[str, Any]) -> str:
    return f"{run['version'] or 'version unknown'} ({run['label']}) {run['passed']}/{run['trials']}"


def describe(item: Mapping[str, Any]) -> str:
    """``2.1.197 (claude-code-2.1.197) 3/3 · 2.1.332 (claude-code-latest) 0/3 · differ, p = 0.1``."""
    first, second = item["runs"]
    word = "differ" if item["differs"] else "no significant difference"
    return f"{_run_text(first)} · {_run_text(second)} · {word}, p = {float(item['p_value']):.3g}"


def headlines(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per pair of versions: ``claude-code-latest fails 3 evals claude-code-2.1.197 passes: a, b, c``."""
    split: dict[tuple[str, str], list[str]] = {}
    for item in items:
        worse = item["regressed"]
        if worse is None:
            continue
        first, second = (run["label"] for run in item["runs"])
        better = first if worse == second else second
        split.setdefault((worse, better), []).append(item["id"])
    return [
        f"{worse} fails {len(ids)} eval{'s' if len(ids) != 1 else ''} {better} passes: {', '.join(ids)}"
        for (worse, better), ids in split.items()
    ]


def markdown_lines(items: Sequence[Mapping[str, Any]], text: Callable[[str], str]) -> list[str]:
    """The job summary's and PR comment's section; ``text`` escapes a value for Markdown."""
    if not items:
        return []
    lines = ["", "### Agent versions", ""]
    lines += [f"**{text(line)}**" for line in headlines(items)]
    if headlines(items):
        lines.append("")
    lines += [f"- {text(item['id'])} × {text(item['agent'])}: {text(describe(item))}" for item in items]
    return [
        *lines,
        "",
        "The same evals on two versions of one agent (`version:` in the eval file); the test is a two-sided "
        "Fisher exact test of their pass counts (they differ at p ≤ 0.1).",
    ]
