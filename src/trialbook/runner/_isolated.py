"""What isolation saw a trial do, added to its result: outside writes, refused connections, and why it failed.

An agent whose model endpoint its network refused fails with a network error of its own words (Claude
Code retries, Codex waits for the network); the result's error then names the refused endpoint and the
setting, so the reader does not have to guess from the agent's stderr.
"""

from __future__ import annotations

import dataclasses

from ..evidence import AgentResult, RefusedConnection
from ..sandbox import Isolation

__all__ = ["isolated_evidence", "isolation_notes", "refused_text"]


def refused_text(refused: tuple[RefusedConnection, ...], limit: int = 5) -> str:
    """``127.0.0.1:4242, 10.0.0.2:53`` (IPv6 in brackets), the first ``limit`` of them."""
    shown = [f"[{c.host}]:{c.port}" if ":" in c.host else f"{c.host}:{c.port}" for c in refused[:limit]]
    more = f", … {len(refused) - limit} more" if len(refused) > limit else ""
    return ", ".join(shown) + more


def isolated_evidence(result: AgentResult, isolation: Isolation) -> AgentResult:
    """``result`` with ``outside_writes`` and ``network_refused``; read once the trial's processes ended."""
    refused = isolation.network_refused()
    error = result.error
    if not result.success and refused:
        why = f"network: {isolation.network} refused the trial's connections to {refused_text(refused)}"
        error = f"{error}; {why}" if error else why
    return dataclasses.replace(
        result, outside_writes=isolation.outside_writes(), network_refused=refused, error=error
    )


def isolation_notes(result: AgentResult) -> tuple[str, ...]:
    """The terminal's lines under a trial: what its network refused, and how much it wrote outside."""
    notes = []
    if result.network_refused:
        notes.append(
            f"network refused ({len(result.network_refused)}): {refused_text(result.network_refused)}"
        )
    if result.outside_writes:
        shown = ", ".join(w.path for w in result.outside_writes[:5])
        more = ", …" if len(result.outside_writes) > 5 else ""
        notes.append(f"written outside the sandbox ({len(result.outside_writes)}): {shown}{more}")
    return tuple(notes)
