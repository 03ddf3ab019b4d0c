"""The terminal table at the end of a run (pure rendering)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..scoring.stats import format_rate

__all__ = ["TableRow", "fit", "format_cost", "format_usd", "render_table", "visible"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def fit(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` characters, cut with ``…``; its indentation is kept."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    flat = indent + " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[: max(width - 1, 0)]
    # At a word's end when one is near: a cut word ("ANTHROPIC_API_KE…") reads as a different word.
    space = cut.rfind(" ", len(indent))
    if space > len(cut) - 24 and space > len(indent):
        cut = cut[:space]
    return cut.rstrip() + "…"


def visible(text: str) -> str:
    r"""``text`` with every control character but newline and tab written out as ``\xNN``.

    Agent output reaches the terminal as evidence: an ESC sequence in it would set the window title,
    colour or clear the screen, a BEL ring, a carriage return overwrite the line before it. Written out,
    the reader sees what the agent printed, and the terminal runs none of it.
    """
    return _CONTROL.sub(lambda found: f"\\x{ord(found[0]):02x}", text)


@dataclass(frozen=True)
class TableRow:
    """One eval × agent line of the final table."""

    eval_id: str
    agent: str
    passed: int | None
    trials: int | None
    verdict: str
    cost_usd: float | None
    duration_s: float | None
    cost_estimated: bool = False
    note: str = ""
    judged: bool = False
    """The eval has ``judge`` checks: the cost column adds what the judges cost (``judge_cost_usd``)."""
    judge_cost_usd: float | None = None


def _cost_cell(row: TableRow) -> str:
    agents = format_cost(row.cost_usd, ran=row.passed is not None, estimated=row.cost_estimated)
    if not row.judged or row.passed is None:
        return agents
    return f"{agents} + judges {format_cost(row.judge_cost_usd)}"


def format_usd(value: float) -> str:
    """Dollars with cents, and with four decimals under a cent so a small cost never reads as free."""
    if 0 < value < 0.0001:
        return "<$0.0001"
    return f"${value:.4f}" if 0 < value < 0.01 else f"${value:.2f}"


def format_cost(cost: float | None, *, ran: bool = True, estimated: bool = False) -> str:
    """``$0.0123``; ``~$0.0123`` for an estimate from tokens; ``unknown`` (never free); ``-`` when not run."""
    if not ran:
        return "-"
    if cost is None:
        return "unknown"
    return f"{'~' if estimated else ''}${cost:.4f}"


def render_table(rows: Sequence[TableRow]) -> str:
    """A plain, aligned table: eval, agent, passed/trials with its 95% interval, verdict, cost, duration."""
    header = ("eval", "agent", "passed (95% CI)", "verdict", "cost", "duration", "note")
    body = [
        (
            row.eval_id,
            row.agent,
            "-" if row.passed is None or row.trials is None else format_rate(row.passed, row.trials),
            row.verdict,
            _cost_cell(row),
            "-" if row.duration_s is None else f"{row.duration_s:.1f}s",
            row.note,
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(line)).rstrip() for line in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths).rstrip())
    return "\n".join(lines)
