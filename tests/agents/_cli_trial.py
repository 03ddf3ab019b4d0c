"""A minimal trial folder for driving real agent CLIs: workdir, isolated home, and a logging shim on PATH."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from trialbook.agents import AgentTask

FAKE_KEY = "sk-fake-7f3c9a1e5b2d4c6a8e0f1a2b3c4d5e6f"
"""A long random-looking key: the CLIs mask short secrets in odd places, and so does trialbook."""

PROMPT = "Write hi to out.txt, then deploy with vendorcli."


@dataclass(frozen=True)
class CliTrial:
    task: AgentTask
    root: Path

    @property
    def calls(self) -> list[str]:
        """Each shimmed ``vendorcli`` call as ``vendorcli ARGS``, in order."""
        log = self.root / "calls.log"
        return log.read_text().splitlines() if log.exists() else []


def make_trial(
    tmp_path: Path,
    *,
    env: dict[str, str] | None = None,
    timeout_s: float = 90,
    max_cost_usd: float | None = None,
) -> CliTrial:
    workdir, home, shims, out = (tmp_path / name for name in ("work", "home", "shims", "out"))
    for folder in (workdir, home, shims, out):
        folder.mkdir(parents=True)
    shim = shims / "vendorcli"
    shim.write_text(f'#!/bin/sh\necho "vendorcli $*" >> "{tmp_path / "calls.log"}"\n')
    shim.chmod(0o755)
    # The CLIs need node (codex.js) and the usual tools from the runner's PATH after the shims.
    task_env = {"PATH": f"{shims}{os.pathsep}{os.environ.get('PATH', os.defpath)}", "HOME": str(home)}
    task_env.update(env or {})
    task = AgentTask(
        prompt=PROMPT,
        workdir=workdir,
        home=home,
        env=task_env,
        output_dir=out,
        timeout_s=timeout_s,
        max_cost_usd=max_cost_usd,
        eval_id="cli-adapter",
    )
    return CliTrial(task, tmp_path)
