"""A finished trial over a real folder, for tests of assertions and of eval files that use them."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trialbook.assertions import Call, CommandOutcome
from trialbook.evidence import AgentResult


def make_calls(*lines: str) -> tuple[Call, ...]:
    """Calls as a shim log would hold them, one per ``bin arg1 arg2`` line."""
    return tuple(
        Call(argv=tuple(line.split(" ")), cwd="/sandbox", exit_code=0, started_at=float(i), duration_ms=1.0)
        for i, line in enumerate(lines)
    )


def _result() -> AgentResult:
    return AgentResult(
        agent_name="literal", agent_version=None, success=True, error=None, stop_reason="completed"
    )


@dataclass
class DirTrial:
    """Implements ``FinishedTrial`` over ``workdir``; ``run`` starts a real shell in its own session."""

    workdir: Path
    calls: Sequence[Call] = ()
    result: AgentResult = field(default_factory=_result)

    def read_text(self, path: str) -> str | None:
        target = self.workdir / path
        try:
            return target.read_text(encoding="utf-8") if target.is_file() else None
        except (OSError, UnicodeDecodeError):
            return None

    def exists(self, path: str) -> bool:
        return (self.workdir / path).exists()

    def run(self, command: str, timeout_s: float) -> CommandOutcome:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=self.workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            return CommandOutcome(exit_code=None, output=output, timed_out=True)
        return CommandOutcome(exit_code=proc.returncode, output=output)
