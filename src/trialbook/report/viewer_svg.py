"""Server-side SVG for the viewer's history trends: no chart library, no script, nothing fetched (pure).

Input is the ``runs`` list of :func:`trialbook.report.history_view.history_json` (oldest first). Every
text that reaches the SVG is escaped here; the result is marked safe for the template.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup, escape

__all__ = ["cost_svg", "interval_svg", "pass_rate_svg"]

_W, _H, _PAD, _LEFT = 240, 56, 6, 30
_COLOUR = {"pass": "#1a7f37", "fail": "#cf222e", "error": "#9a6700", "incomplete": "#6e7781"}


def _x(index: int, count: int) -> float:
    if count <= 1:
        return (_LEFT + _W) / 2
    return _LEFT + index * (_W - _LEFT - _PAD) / (count - 1)


def _y(value: float, top: float) -> float:
    span = top if top > 0 else 1.0
    return _H - _PAD - (value / span) * (_H - 2 * _PAD)


def _version_marks(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    marks = []
    for index in range(1, len(runs)):
        before, after = runs[index - 1].get("agent_version"), runs[index].get("agent_version")
        if before != after:
            x = (_x(index - 1, len(runs)) + _x(index, len(runs))) / 2
            label = escape(f"agent version {before or 'unknown'} → {after or 'unknown'}")
            marks.append(
                f'<line class="version" x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{_H}" '
                f'stroke="#8250df" stroke-dasharray="3 2"><title>{label}</title></line>'
            )
    return marks


def _axis(top: str, bottom: str) -> list[str]:
    style = 'font-size="9" fill="#656d76" text-anchor="end"'
    return [
        f'<line x1="{_LEFT - 3}" y1="{_PAD}" x2="{_W}" y2="{_PAD}" stroke="#d0d7de"/>',
        f'<line x1="{_LEFT - 3}" y1="{_H - _PAD}" x2="{_W}" y2="{_H - _PAD}" stroke="#d0d7de"/>',
        f'<text x="{_LEFT - 5}" y="{_PAD + 3}" {style}>{escape(top)}</text>',
        f'<text x="{_LEFT - 5}" y="{_H - _PAD + 3}" {style}>{escape(bottom)}</text>',
    ]


def _frame(label: str, body: list[str]) -> Markup:
    return Markup(
        f'<svg class="trend" xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{escape(label)}">'
        f'<rect width="{_W}" height="{_H}" fill="#f6f8fa"/>' + "".join(body) + "</svg>"
    )


def pass_rate_svg(runs: Sequence[Mapping[str, Any]]) -> Markup:
    """Pass rate per run as a line with a dot per run, coloured by verdict; version changes dashed."""
    body = [*_axis("100%", "0%"), *_version_marks(runs)]
    points = []
    for index, run in enumerate(runs):
        rate = run.get("pass_rate")
        x = _x(index, len(runs))
        title = escape(
            f"{run.get('started_at')}: {run.get('verdict')}, pass rate "
            f"{'unknown' if rate is None else f'{rate:.0%}'}, agent {run.get('agent_version') or 'unknown'}"
        )
        if rate is None:
            body.append(
                f'<text x="{x:.1f}" y="{_H - 2}" font-size="9" text-anchor="middle">'
                f"·<title>{title}</title></text>"
            )
            continue
        y = _y(float(rate), 1.0)
        points.append(f"{x:.1f},{y:.1f}")
        colour = _COLOUR.get(str(run.get("verdict")), "#6e7781")
        body.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"><title>{title}</title></circle>'
        )
    if len(points) > 1:
        body.insert(
            0, f'<polyline fill="none" stroke="#57606a" stroke-width="1" points="{" ".join(points)}"/>'
        )
    return _frame(f"pass rate over the last {len(runs)} runs", body)


def cost_svg(runs: Sequence[Mapping[str, Any]]) -> Markup:
    """Cost per run as bars scaled to the dearest run; an unknown cost is a grey tick, never a zero bar."""
    costs = [run.get("cost_usd") for run in runs]
    top = max((float(c) for c in costs if c is not None), default=0.0)
    body = [*_axis(f"${top:.2f}", "$0"), *_version_marks(runs)]
    width = max(2.0, (_W - _LEFT - _PAD) / max(len(runs), 1) - 2)
    for index, cost in enumerate(costs):
        x = _x(index, len(runs)) - width / 2
        when = runs[index].get("started_at")
        if cost is None:
            body.append(
                f'<rect x="{x:.1f}" y="{_H - _PAD - 2}" width="{width:.1f}" height="2" fill="#d0d7de">'
                f"<title>{escape(f'{when}: cost unknown')}</title></rect>"
            )
            continue
        y = min(_y(float(cost), top), _H - _PAD - 1)  # a known zero still shows as a dark tick
        body.append(
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{_H - _PAD - y:.1f}" fill="#0969da">'
            f"<title>{escape(f'{when}: ${float(cost):.4f}')}</title></rect>"
        )
    return _frame(f"cost over the last {len(runs)} runs", body)


def interval_svg(interval: Mapping[str, float] | None, rate: float | None, threshold: float | None) -> Markup:
    """The Wilson interval as a band on 0-100%, the observed rate a dot, the threshold a red line."""
    width, height = 120, 14
    if interval is None or rate is None:
        return Markup('<span class="dim">–</span>')
    low, high = interval["low"] * width, interval["high"] * width
    parts = [
        f'<rect x="0" y="5" width="{width}" height="4" fill="#eaeef2"/>',
        f'<rect class="band" x="{low:.1f}" y="3" width="{max(high - low, 1):.1f}" height="8" '
        'fill="#54aeff"/>',
        f'<circle cx="{rate * width:.1f}" cy="7" r="3" fill="#0a3069"/>',
    ]
    if threshold is not None:
        x = threshold * width
        parts.append(
            f'<line class="threshold" x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height}" '
            'stroke="#cf222e" stroke-width="2"/>'
        )
    label = escape(
        f"pass rate {rate:.0%}, 95% interval {interval['low']:.0%}–{interval['high']:.0%}"
        + ("" if threshold is None else f", threshold {threshold:.0%}")
    )
    return Markup(
        f'<svg class="interval" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{label}"><title>{label}</title>'
        + "".join(parts)
        + "</svg>"
    )
