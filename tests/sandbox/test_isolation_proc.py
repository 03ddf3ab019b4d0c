"""Under bubblewrap the agent's ``/proc`` is its own PID namespace's: no process of the host is there.

Without isolation the agent sees every process of the machine (the test's own among them), so the test
can fail; under ``bwrap`` it sees only the trial's processes, numbered from 1.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.system import ensure

from .isolated import run_isolated

LOOK = """
ls /proc | grep -E '^[0-9]+$' | sort -n > pids.txt
test -d /proc/{pid} && echo seen > host.txt || echo hidden > host.txt
"""


def _look(project: Path, isolation: str) -> tuple[str, list[int]]:
    script = LOOK.format(pid=os.getpid())
    run = run_isolated(
        project, script, isolation, checks="[file_exists: host.txt]", args=["--keep-sandboxes"]
    )
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    assert run.test["properties"]["sandbox"]["isolation"] == isolation
    sandbox = Path(run.test["executions"][0]["result"]["working_directory"])
    pids = [int(line) for line in (sandbox / "pids.txt").read_text().split()]
    return (sandbox / "host.txt").read_text().strip(), pids


def test_the_agent_sees_only_its_own_processes_under_bwrap(tmp_path: Path) -> None:
    ensure("bubblewrap")
    host, everything = _look(tmp_path / "none", "none")
    assert host == "seen" and os.getpid() in everything  # the host's processes are all there: it can fail
    host, own = _look(tmp_path / "bwrap", "bwrap")
    # The namespace's own init and the script's few processes, numbered from 1; nothing of the host
    # (the test's pid is there only if it happens to be one of those small numbers).
    assert own[0] == 1 and len(own) < 16, own
    assert (host == "hidden") == (os.getpid() not in own)
