"""``trialbook history``: per eval x agent, how the verdicts moved over the last runs.

Pure: it takes history lines already read (anything shaped like ``trialbook.history.HistoryLine``; a
protocol keeps this module free of the git edge) and returns text or JSON-ready dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from ..scoring.flaky import MIN_RUNS, Flakiness, is_base_run, stability
from ..scoring.stats import format_rate, rate_json

__all__ = [
    "MIN_RUNS",
    "Flakiness",
    "HistoryEntry",
    "classify",
    "history_json",
    "render_history",
    "sparkline",
    "trend",
    "window",
]

_SYMBOL = {"pass": "✓", "fail": "✗", "error": "!", "incomplete": "?"}
_BARS = "▁▂▃▄▅▆▇█"
_VERSION_MARK = "|"


class HistoryEntry(Protocol):
    """The fields of a history line this view reads."""

    @property
    def verdict(self) -> str:
        """pass, fail, error or incomplete."""

    @property
    def pass_rate(self) -> float | None:
        """Share of trials that passed; None when none finished."""

    @property
    def passed(self) -> int:
        """Trials that passed."""

    @property
    def trials(self) -> int:
        """Trials that ran."""

    @property
    def agent_version(self) -> str | None:
        """The agent's version, None when unknown."""

    @property
    def cost_usd(self) -> float | None:
        """Cost of the run, None when unknown."""

    @property
    def duration_s(self) -> float | None:
        """Wall time of the run, None when unknown."""

    @property
    def started_at(self) -> str:
        """ISO-8601 UTC start time ending in Z."""

    @property
    def run_id(self) -> str:
        """Unique id of the run."""

    @property
    def commit(self) -> str | None:
        """The user's commit the run tested, None when unknown."""

    @property
    def ci_run(self) -> str | None:
        """Link to the CI run, None outside CI."""


def _when(entry: HistoryEntry) -> datetime:
    return datetime.fromisoformat(entry.started_at.replace("Z", "+00:00"))


def window(entries: Sequence[HistoryEntry], last_n: int) -> list[HistoryEntry]:
    """The last ``last_n`` runs, oldest first, ordered by start time rather than file order."""
    ordered = sorted(entries, key=_when)
    return ordered[-last_n:] if last_n > 0 else []


def classify(runs: Sequence[HistoryEntry]) -> Flakiness:
    """Stability over ``runs``; errors and incomplete runs are not evidence either way.

    Stable means every trial agreed: all runs passed with every trial passing (``stable-pass``) or
    all failed with no trial passing (``stable-fail``). A run that passed on 2 of 3 trials is flaky
    even though its verdict was ``pass``. See :func:`trialbook.scoring.flaky.stability` for
    ``regressed`` and ``recovered``.
    """
    return stability(runs).flakiness


def _marks(runs: Sequence[HistoryEntry], cell: list[str]) -> str:
    out: list[str] = []
    for index, run in enumerate(runs):
        if index and run.agent_version != runs[index - 1].agent_version:
            out.append(_VERSION_MARK)
        out.append(cell[index])
    return "".join(out)


def trend(runs: Sequence[HistoryEntry]) -> str:
    """``✓✗!?`` per run, oldest first, with ``|`` where the agent version changed."""
    return _marks(runs, [_SYMBOL.get(run.verdict, "?") for run in runs])


def sparkline(runs: Sequence[HistoryEntry]) -> str:
    """Pass rate per run as a bar (``·`` when no trial finished), ``|`` at version changes."""
    cells = [
        "·" if run.pass_rate is None else _BARS[min(int(run.pass_rate * len(_BARS)), len(_BARS) - 1)]
        for run in runs
    ]
    return _marks(runs, cells)


def _versions(runs: Sequence[HistoryEntry]) -> list[str | None]:
    out: list[str | None] = []
    for run in runs:
        if not out or out[-1] != run.agent_version:
            out.append(run.agent_version)
    return out


def _cost(runs: Sequence[HistoryEntry]) -> dict[str, Any]:
    known = [run.cost_usd for run in runs if run.cost_usd is not None]
    return {
        "mean_usd": sum(known) / len(known) if known else None,
        "total_known_usd": sum(known) if known else None,
        "unknown_runs": len(runs) - len(known),
    }


def _summary(key: tuple[str, str], entries: Sequence[HistoryEntry], last_n: int) -> dict[str, Any]:
    runs = window(entries, last_n)
    # Stability is judged on the base branch only: a PR's runs test code that was never merged.
    found = stability([run for run in runs if is_base_run(run)])
    return {
        "id": key[0],
        "agent": key[1],
        "runs_total": len(entries),
        "window": len(runs),
        "flakiness": found.flakiness,
        "changed_at": found.changed_at,
        "stability": found.label,
        "base_runs": found.runs,
        "passed": found.passed,
        "trials": found.trials,
        **rate_json(found.passed, found.trials),
        "base_agent_versions": list(found.agent_versions),
        "trend": trend(runs),
        "pass_rate_trend": sparkline(runs),
        "agent_versions": _versions(runs),
        "cost": _cost(runs),
        "runs": [
            {
                "started_at": run.started_at,
                "verdict": run.verdict,
                "pass_rate": run.pass_rate,
                "agent_version": run.agent_version,
                "cost_usd": run.cost_usd,
                "duration_s": run.duration_s,
                "commit": run.commit,
                "ci_run": run.ci_run,
                "run_id": run.run_id,
            }
            for run in runs
        ],
    }


def history_json(
    lines_by_key: Mapping[tuple[str, str], Sequence[HistoryEntry]], *, last_n: int = 10, flaky: bool = False
) -> list[dict[str, Any]]:
    """One dict per (id, agent), sorted; ``runs`` lists the window oldest first. Unknown stays None.

    With ``flaky`` only the eval × agent pairs classed ``flaky`` are listed.
    """
    summaries = [_summary(key, lines_by_key[key], last_n) for key in sorted(lines_by_key)]
    return [s for s in summaries if s["flakiness"] == "flaky"] if flaky else summaries


def _money(cost: Mapping[str, Any]) -> str:
    mean = cost["mean_usd"]
    text = "unknown" if mean is None else f"${mean:.2f}"
    if mean is not None and cost["unknown_runs"]:
        text += f" ({cost['unknown_runs']} unknown)"
    return text


def render_history(
    lines_by_key: Mapping[tuple[str, str], Sequence[HistoryEntry]], *, last_n: int = 10, flaky: bool = False
) -> str:
    """A table: trend of verdicts and pass rates (oldest to newest), stability, cost per run, versions.

    ``trials passed`` pools the trials of the window's base-branch runs, with its 95% Wilson interval.
    """
    summaries = history_json(lines_by_key, last_n=last_n, flaky=flaky)
    if not summaries:
        return "No flaky evals in the window.\n" if flaky else "No history yet.\n"
    header = (
        "eval",
        "agent",
        f"last {last_n} (old → new)",
        "pass rate",
        "trials passed",
        "stability",
        "cost/run",
        "versions",
    )
    rows = [header] + [
        (
            s["id"],
            s["agent"],
            s["trend"],
            s["pass_rate_trend"],
            format_rate(s["passed"], s["trials"]),
            s["stability"],
            _money(s["cost"]),
            " → ".join(v or "unknown" for v in s["agent_versions"]),
        )
        for s in summaries
    ]
    widths = [max(len(row[col]) for row in rows) for col in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]
    legend = f"✓ pass  ✗ fail  ! error  ? incomplete  {_VERSION_MARK} agent version changed"
    return "\n".join([*lines, "", legend]) + "\n"
