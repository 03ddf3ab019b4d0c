"""Under bubblewrap the agent's ``/proc`` is its own PID namespace's: no process of the host is there.

Without isolation the agent sees every process of the machine (the test's own among them), so the test
can fail; under ``bwrap`` it sees only the trial's processes, numbered from 1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.system import ensure

TRIALBOOK = Path(sys.executable).parent / "trialbook"

LOOK = """
prompt_text: look around
agents:
  - name: looker
    script: |
      ls /proc | grep -E '^[0-9]+$' | sort -n > pids.txt
      test -d /proc/{pid} && echo seen > host.txt || echo hidden > host.txt
negative_control: false
assert:
  - file_exists: host.txt
"""


def _look(project: Path, isolation: str) -> tuple[str, list[int]]:
    (project / "evals").mkdir(parents=True)
    (project / "evals/look.eval.yaml").write_text(textwrap.dedent(LOOK).format(pid=os.getpid()))
    done = subprocess.run(
        [str(TRIALBOOK), "eval", "evals", "--isolation", isolation, "--keep-sandboxes"],
        cwd=project, env={**os.environ, "CI": "true"}, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (test,) = json.loads((project / ".trialbook/runs/latest/suite.json").read_text())["tests"]
    assert test["properties"]["sandbox"]["isolation"] == isolation
    sandbox = Path(test["executions"][0]["result"]["working_directory"])
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
