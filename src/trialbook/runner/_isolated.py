"""What isolation saw a trial do, added to its result: outside writes, refused connections, and why it failed.

How it reads (the terminal's lines under a trial, the summary's) is ``report.isolation``'s.

An agent whose model endpoint its network refused fails with a network error of its own words (Claude
Code retries, Codex waits for the network); the result's error then names the refused endpoint and the
setting, so the reader does not have to guess from the agent's stderr.
"""

from __future__ import annotations

import dataclasses

from ..evidence import AgentResult
from ..report.isolation import refused_text
from ..sandbox import IsolationBackend

__all__ = ["isolated_evidence"]


def isolated_evidence(result: AgentResult, isolation: IsolationBackend) -> AgentResult:
    """``result`` with ``outside_writes`` and ``network_refused``; read once the trial's processes ended."""
    refused = isolation.network_refused()
    error = result.error
    if not result.success and refused:
        why = f"network: {isolation.network} refused the trial's connections to {refused_text(refused)}"
        error = f"{error}; {why}" if error else why
    return dataclasses.replace(
        result, outside_writes=isolation.outside_writes(), network_refused=refused, error=error
    )
