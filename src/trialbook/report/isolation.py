"""How isolation reads to a reader: which one ran, and what a trial did outside its sandbox (pure).

The terminal, the job summary, the PR comment and ``trialbook report`` all word it the same way, from
what the evidence records: ``properties.sandbox`` of each eval × agent, ``network_refused`` and
``outside_writes`` of each trial (already masked).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..evidence import AgentResult, JsonValue, OutsideWrite, RefusedConnection

__all__ = [
    "SHOWN",
    "isolation_label",
    "isolation_text",
    "outside_lines",
    "outside_notes",
    "refused_text",
    "sandbox_label",
    "writes_text",
]

SHOWN = 5
"""Items of one list shown in a line; the rest are counted (``… 3 more``)."""


def isolation_label(isolation: str, network: str | None) -> str:
    """``bwrap (network: model)``, or ``none``: without isolation the trial has the runner's network."""
    if isolation == "none" or not network:
        return isolation
    return f"{isolation} (network: {network})"


def sandbox_label(props: Mapping[str, JsonValue]) -> str | None:
    """Which isolation a test's trials ran under (its ``properties``), as :func:`isolation_label` says it.

    ``None`` where it is not known: no ``sandbox`` recorded, or trials re-checked from an earlier run
    (``rescored_from``), which ran under whatever isolation that run had.
    """
    sandbox = props.get("sandbox")
    if "rescored_from" in props or not isinstance(sandbox, dict):
        return None
    if not isinstance(isolation := sandbox.get("isolation"), str):
        return None
    network = sandbox.get("network")
    return isolation_label(isolation, network if isinstance(network, str) else None)


def _more(shown: list[str], total: int) -> str:
    more = [f"… {total - len(shown)} more"] if total > len(shown) else []
    return ", ".join([*shown, *more])


def isolation_text(pairs: Sequence[tuple[str, str, str]]) -> str | None:
    """``bwrap (network: none)``, or per eval where they differ; ``None`` for no pair.

    ``bwrap (network: none) for a, b; none for c``: the names of a label are the first few, then counted.

    Args:
        pairs: ``(eval id, agent, label)`` of each eval × agent that ran, ``label`` from
            :func:`isolation_label`. An eval whose agents ran under different isolations is named
            ``eval × agent``.
    """
    labels = list(dict.fromkeys(label for _, _, label in pairs))
    if not labels:
        return None
    if len(labels) == 1:
        return labels[0]
    per_eval: dict[str, set[str]] = {}
    for eval_id, _, label in pairs:
        per_eval.setdefault(eval_id, set()).add(label)
    named: dict[str, list[str]] = {label: [] for label in labels}
    for eval_id, agent, label in pairs:
        name = eval_id if len(per_eval[eval_id]) == 1 else f"{eval_id} × {agent}"
        if name not in named[label]:
            named[label].append(name)
    groups = [f"{label} for {_more(names[:SHOWN], len(names))}" for label, names in named.items()]
    return "; ".join(groups)


def refused_text(refused: Sequence[RefusedConnection], limit: int = SHOWN) -> str:
    """``127.0.0.1:4242, 10.0.0.2:53`` (IPv6 in brackets), the first ``limit`` of them."""
    shown = [f"[{c.host}]:{c.port}" if ":" in c.host else f"{c.host}:{c.port}" for c in refused[:limit]]
    return _more(shown, len(refused))


def writes_text(writes: Sequence[OutsideWrite], limit: int = SHOWN) -> str:
    """``/etc/x (2 bytes), ~/.bashrc (removed)``, the first ``limit`` of them."""
    shown = [f"{w.path} ({'removed' if w.removed else _bytes(w.size)})" for w in writes[:limit]]
    return _more(shown, len(writes))


def _bytes(size: int) -> str:
    return "1 byte" if size == 1 else f"{size} bytes"


def outside_notes(result: AgentResult) -> tuple[str, ...]:
    """What one trial's network refused and what it wrote outside its sandbox, a line each (or none)."""
    notes = []
    if result.network_refused:
        notes.append(
            f"network refused ({len(result.network_refused)}): {refused_text(result.network_refused)}"
        )
    if result.outside_writes:
        count = len(result.outside_writes)
        notes.append(f"written outside the sandbox ({count}): {writes_text(result.outside_writes)}")
    return tuple(notes)


def outside_lines(trials: Sequence[tuple[int, AgentResult]]) -> tuple[str, ...]:
    """``trial 2: network refused (1): 127.0.0.1:4242`` for the first trials that have such notes.

    Args:
        trials: ``(trial number, result)`` of an eval × agent's trials, in order.
    """
    noted = [(number, notes) for number, result in trials if (notes := outside_notes(result))]
    lines = [f"trial {number}: {note}" for number, notes in noted[:SHOWN] for note in notes]
    if len(noted) > SHOWN:
        lines.append(f"… {len(noted) - SHOWN} more trials")
    return tuple(lines)
