"""What a sweep kills and the kernel then hands to trialbook is reaped, not left as a zombie.

While a trial runs, trialbook is a child subreaper. A trial process whose parent the same sweep killed
becomes trialbook's child only as that parent dies, after the pass that saw it: it was not trialbook's
child when it was killed. Left unreaped, every such zombie stays in the process table for the rest of the
run (a forking agent leaves thousands), and each later sweep reads them all.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TrialScope

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

CHILDREN = 20


def _state_and_parent(pid: int) -> tuple[str, int] | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], int(fields[1])


def test_grandchildren_killed_with_their_parent_are_reaped_when_the_trial_ends(
    scope: TrialScope, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    # setsid -f leaves sh to trialbook (the subreaper); the sleepers are sh's children, not trialbook's.
    script = f"for i in $(seq {CHILDREN}); do sleep 300 & echo $! >> {pids}; done; echo ready; exec >&-; wait"
    starter = subprocess.Popen(
        ["setsid", "-f", "sh", "-c", script],
        env=scope.env({"PATH": "/usr/bin:/bin"}),
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    assert starter.stdout is not None
    with starter.stdout:
        assert starter.stdout.readline() == b"ready\n"  # every sleeper started and wrote its pid
    starter.wait()
    sleepers = read_pids(pids)
    assert len(sleepers) == CHILDREN
    scope.close()
    left = {pid: _state_and_parent(pid) for pid in sleepers}
    # Each is gone: reaped by trialbook, its new parent, not a zombie of trialbook's.
    assert {pid: seen for pid, seen in left.items() if seen is not None} == {}
    assert os.getpid() not in {seen[1] for seen in left.values() if seen is not None}
