"""Attacks that reach this machine without isolation and are held under bwrap, each tried both ways.

Each attack runs as a real trial (``trialbook eval`` in a subprocess). Without isolation it does reach
the host, so each test proves the breach and then undoes it: a file of a name no other test uses,
written into trialbook's virtualenv or ``/etc``, is removed, and a process that escaped is killed by
its pid.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.system import ensure

from .isolated import IsolatedRun, run_isolated

VENV = Path(sys.prefix)
ATTACK_PREFIX = "trialbook-attack-"
REPORT = re.compile(r"(venv|write|escaped): \w+")

ESCAPE = """
mkfifo escaped
cgroups=$(grep -m1 ' - cgroup2 ' /proc/self/mountinfo | cut -d' ' -f5)
(env -i setsid bash -c '
  [ -n "$1" ] && echo $$ > "$1/cgroup.procs" 2>/dev/null
  echo $$ > escaped
  exec -a {name} sleep 3600' escapee "$cgroups" < /dev/null > /dev/null 2>&1 &)
read escapee < escaped && echo "escaped: $escapee"
touch started
"""
"""The escape docs/processes.md names: no marker (a cleared environment), a session of its own, the root
cgroup of the cgroup2 mount (root may move there), a name of its own; the agent waits until it is out."""


def _prepare(isolation: str) -> None:
    if isolation == "bwrap":
        ensure("bubblewrap")


def _said(run: IsolatedRun) -> list[str]:
    """What the attacker's script reported (its ``name: value`` lines of ``script.log``)."""
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    lines = (run.trial / "script.log").read_text().splitlines()
    return [line for line in lines if REPORT.fullmatch(line)]


def _attack_files(folder: Path) -> set[str]:
    # Another test's attack may be writing in parallel: compare the folder without those.
    return {path.name for path in folder.iterdir() if not path.name.startswith(ATTACK_PREFIX)}


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_an_agent_writes_into_trialbook_s_virtualenv_only_without_isolation(
    tmp_path: Path, isolation: str
) -> None:
    _prepare(isolation)
    bin_folder = VENV / "bin"
    before = _attack_files(bin_folder)
    planted = bin_folder / f"{ATTACK_PREFIX}{uuid.uuid4().hex}"
    script = (
        f"ls {bin_folder}/python > /dev/null 2>&1 && echo venv: seen || echo venv: hidden\n"
        f"(echo pwned > {planted}) 2>/dev/null && echo write: done || echo write: refused\n"
        "touch started"
    )
    try:
        run = run_isolated(tmp_path, script, isolation)
        landed = planted.exists() and planted.read_text()
    finally:
        planted.unlink(missing_ok=True)
    if isolation == "none":  # the breach: trialbook's own code is the agent's to replace
        assert _said(run) == ["venv: seen", "write: done"]
        assert landed == "pwned\n"
    else:  # covered by an empty folder of the trial's own: nothing there to see or to write into
        assert _said(run) == ["venv: hidden", "write: refused"]
        assert landed is False
    assert _attack_files(bin_folder) == before


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_an_agent_writes_into_etc_on_the_host_only_without_isolation(tmp_path: Path, isolation: str) -> None:
    _prepare(isolation)
    if isolation == "none" and not os.access("/etc", os.W_OK):
        pytest.skip("the breach needs a runner that may write /etc (root)")
    before = _attack_files(Path("/etc"))
    target = Path("/etc") / f"{ATTACK_PREFIX}{uuid.uuid4().hex}"
    try:
        run = run_isolated(tmp_path, f"echo x > {target} && touch started", isolation)
        landed = target.exists()
    finally:
        target.unlink(missing_ok=True)
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    result = run.test["executions"][0]["result"]
    if isolation == "none":  # the breach, and nothing lists it
        assert landed
        assert "outside_writes" not in result
    else:  # into the trial's own layer over /etc, listed, never the host's
        assert not landed
        assert result["outside_writes"] == [{"path": str(target), "size": 2, "removed": False}]
    assert _attack_files(Path("/etc")) == before


def _escapees(name: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"^{name} "], capture_output=True, text=True, check=False)
    return [int(pid) for pid in found.stdout.split()]


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_a_root_agent_s_escaped_process_outlives_the_run_only_without_isolation(
    tmp_path: Path, isolation: str
) -> None:
    _prepare(isolation)
    if isolation == "none" and os.geteuid() != 0:
        pytest.skip("the escape that outlives a trial without isolation leaves the cgroup, which takes root")
    name = f"tb-escapee-{uuid.uuid4().hex[:12]}"
    try:
        run = run_isolated(tmp_path, ESCAPE.format(name=name), isolation)
        survivors = _escapees(name)
    finally:
        for pid in _escapees(name):
            os.kill(pid, signal.SIGKILL)
    (said,) = _said(run)
    assert said.startswith("escaped: ")  # it was out before the agent ended, under both
    if isolation == "none":  # the breach: trialbook's cleanup finds nothing of it, and it outlives the run
        assert len(survivors) == 1, survivors
    else:  # one of the trial's PID namespace, which the kernel ended with the trial
        assert survivors == []
