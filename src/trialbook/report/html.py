"""The trial viewer: one self-contained HTML file for a run (pure: data in, a string out).

Jinja2 with autoescape renders the overview and the history trends server-side; each trial's details go
into the page once, as JSON in its own ``<script type="application/json">`` block, and the page's script
parses and renders a trial only when it is opened. CSS and script are inline, a Content-Security-Policy
forbids every fetch, and no string from the run reaches the page except through escaping (Jinja2's for
HTML, :func:`script_json` for the JSON blocks, ``textContent`` in the page's script).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from .viewer_load import RunData
from .viewer_model import build_overview, build_trials, suite_meta
from .viewer_svg import cost_svg, interval_svg, pass_rate_svg

__all__ = ["render_html", "script_json"]

_VERDICT_ORDER = ("fail", "error", "incomplete", "pass", "cached", "skipped")


def script_json(value: Any) -> Markup:
    """JSON safe inside a ``<script>`` element: ``<``, ``>``, ``&`` and line separators escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return Markup(text)


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("trialbook.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _asset(env: Environment, name: str) -> Markup:
    assert env.loader is not None
    source, _, _ = env.loader.get_source(env, name)
    if "</" in source:  # would end the inline <style> or <script> early
        raise ValueError(f"{name} must not contain '</'")
    return Markup(source)


def _cost_text(cost: Mapping[str, Any]) -> str:
    parts = []
    if cost["reported_usd"] is not None:
        parts.append(f"${cost['reported_usd']:.4f}")
    if cost["estimated_usd"] is not None:
        parts.append(f"~${cost['estimated_usd']:.4f} est. ({cost['estimated_trials']})")
    if cost["unknown_trials"]:
        parts.append(f"{cost['unknown_trials']} unknown")
    return " + ".join(parts) if parts else "–"


def _history_rows(history: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    for summary in history:
        runs = summary["runs"]
        mean = summary["cost"]["mean_usd"]
        unknown = summary["cost"]["unknown_runs"]
        cost_text = (
            "unknown" if mean is None else f"mean ${mean:.4f}" + (f", {unknown} unknown" if unknown else "")
        )
        rows.append(
            {
                "id": summary["id"],
                "agent": summary["agent"],
                "flakiness": summary["flakiness"],
                "svg": pass_rate_svg(runs),
                "cost_svg": cost_svg(runs),
                "cost_text": cost_text,
                "versions": " → ".join(v or "unknown" for v in summary["agent_versions"]),
            }
        )
    return rows


def _safe_url(url: str | None) -> str | None:
    return url if url and url.startswith(("https://", "http://")) else None


def render_html(
    run: RunData,
    *,
    link_base: Path | None,
    link_prefix: str = "",
    history: Sequence[Mapping[str, Any]] | None = None,
    history_window: int = 10,
) -> str:
    """The viewer page for ``run``.

    Args:
        run: the loaded run folder; every string in it is already masked.
        link_base: the folder the page will live in, so links to raw trial files are relative and keep
            working when the page and the run folder are moved together; ``None`` for absolute links.
        link_prefix: put before each relative link (``trialbook view`` serves raw files under ``files/``).
        history: summaries from :func:`trialbook.report.history_view.history_json`, or ``None``.
        history_window: how many runs each summary covers, for the page's wording.
    """
    rows = build_overview(run)
    trials = build_trials(run, link_base=link_base, link_prefix=link_prefix)
    history_rows = _history_rows(history) if history is not None else []
    by_id = {f"{h['id']}::{h['agent']}": h for h in history_rows}
    passed_keys = {t["key"]: t["passed"] for t in trials}
    index_rows: dict[str, Any] = {}
    for row in rows:
        cost = row["cost"]
        known = [v for v in (cost["reported_usd"], cost["estimated_usd"]) if v is not None]
        row["cost_total"] = sum(known) if known else None
        row["cost_text"] = _cost_text(cost)
        rate = None if row["passed"] is None or not row["trials"] else row["passed"] / row["trials"]
        row["interval_svg"] = interval_svg(row["interval"], rate, row["threshold"])
        row["history"] = by_id.get(row["id"])
        good = next((k for k in row["trial_keys"] if passed_keys.get(k) is True), None)
        bad = next((k for k in row["trial_keys"] if passed_keys.get(k) is False), None)
        row["compare"] = [good, bad] if good and bad else None
        index_rows[row["id"]] = {
            "trial_keys": row["trial_keys"],
            "compare": row["compare"],
            "isolation": row["isolation"],
        }
    meta = suite_meta(run)
    meta["ci_run_url"] = _safe_url(meta["ci_run_url"] if isinstance(meta["ci_run_url"], str) else None)
    present = {row["verdict"] for row in rows}
    env = _environment()
    return env.get_template("viewer.html.j2").render(
        meta=meta,
        rows=rows,
        verdicts=[v for v in _VERDICT_ORDER if v in present] + sorted(present - set(_VERDICT_ORDER)),
        agents=sorted({row["agent"] for row in rows}),
        history=history_rows,
        history_window=history_window,
        trials=[script_json(t) for t in trials],
        index_json=script_json({"rows": index_rows, "trials": {t["key"]: i for i, t in enumerate(trials)}}),
        css=_asset(env, "viewer.css"),
        js=_asset(env, "viewer.js"),
    )
