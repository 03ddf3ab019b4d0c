"""Process checks shared by the sandbox and agent tests: is a pid still a running process?"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from trialbook.sandbox import run_process
from trialbook.sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor


def running(pid: int) -> bool:
    """True while ``pid`` is a live process; a zombie waiting to be reaped counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    # The state letter follows the parenthesised command name, which may itself hold spaces.
    return stat.rsplit(")", 1)[1].split()[0] not in {"Z", "X"}


def wait_gone(pids: list[int], attempts: int = 100) -> list[int]:
    """Poll until every pid is gone (a killed process needs a moment); return those still running."""
    alive = list(pids)
    for _ in range(attempts):
        alive = [pid for pid in alive if running(pid)]
        if not alive:
            break
        time.sleep(0.05)
    return alive


def read_pids(path: Path) -> list[int]:
    """The pids a test script wrote to ``path``, one a line."""
    return [int(line) for line in path.read_text().split()]


def run_in_trial(scope: TrialScope, script: str, cwd: Path) -> None:
    """Run ``script`` with ``bash -c`` as one of the trial's commands; it must exit 0 within a minute."""
    env = {"PATH": "/usr/bin:/bin", TRIAL_MARKER: scope.marker}
    outcome = asyncio.run(run_process(["bash", "-c", script], cwd=cwd, env=env, timeout_s=60))
    assert outcome.returncode == 0, outcome.stderr


def open_cgroup_scope() -> TrialScope:
    """A new trial scope that has a cgroup of its own (``TRIALBOOK_CGROUP=on`` is the caller's)."""
    scope = supervisor().open_trial()
    assert scope.mechanism == "cgroup" and scope.group is not None
    return scope
