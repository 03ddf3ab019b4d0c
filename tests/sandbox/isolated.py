"""Run one script-agent eval as CI runs it (``trialbook eval`` in a subprocess), under a given isolation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRIALBOOK = Path(sys.executable).parent / "trialbook"


@dataclass(frozen=True)
class IsolatedRun:
    """A finished ``trialbook eval``: its process, the suite it wrote and the trial's results folder."""

    done: subprocess.CompletedProcess[str]
    project: Path

    @property
    def suite(self) -> dict[str, Any]:
        """The run's ``suite.json``."""
        data: dict[str, Any] = json.loads((self.project / ".trialbook/runs/latest/suite.json").read_text())
        return data

    @property
    def test(self) -> dict[str, Any]:
        """The suite's one test."""
        (test,) = self.suite["tests"]
        return dict(test)

    @property
    def trial(self) -> Path:
        """The one trial's results folder (``result.json``, ``calls.jsonl``)."""
        (folder,) = (self.project / ".trialbook/runs/latest/evals").glob("*/*/trial-1")
        return folder

    def calls(self) -> list[dict[str, Any]]:
        """The trial's call log, line by line."""
        text = (self.trial / "calls.jsonl").read_text()
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def run_isolated(
    project: Path,
    script: str,
    isolation: str,
    extra: str = "",
    checks: str = "[file_exists: started]",
    env: dict[str, str] | None = None,
    args: Sequence[str] = (),
) -> IsolatedRun:
    """``trialbook eval`` of one script-agent eval in ``project`` with ``--isolation isolation``.

    ``extra`` is more of the eval file (``shims: ...``, ``sandbox: ...``), ``checks`` its ``assert:``,
    ``args`` more of the command line (``--summary summary.md``).
    """
    (project / "evals").mkdir(parents=True, exist_ok=True)
    (project / "evals/e.eval.yaml").write_text(
        f"prompt_text: attack\nagents: [{{name: s, script: {json.dumps(script)}}}]\n"
        f"negative_control: false\n{extra}assert: {checks}\n"
    )
    done = subprocess.run(
        [str(TRIALBOOK), "eval", "evals", "--isolation", isolation, *args],
        cwd=project, env={**os.environ, "CI": "true", **(env or {})},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return IsolatedRun(done, project)
