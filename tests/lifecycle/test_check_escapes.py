"""What a check starts after the trial's sweep ends with the trial, and is counted, with either mechanism.

The trial's processes are swept after the agent; the sweep at the trial's end is left out only when nothing
can have started since. A ``succeeds`` check is a command started after that sweep: here it leaves a
``setsid -f`` daemon and exits, so the daemon is in a session of its own, re-parented to trialbook, and
only the sweep (or the cgroup) at the trial's end can find it. A real ``trialbook eval``, several trials at
once, each check leaving one daemon: none may survive, and each trial counts exactly its one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .escapes import trialbook, wait_for_no_survivors

TRIALS = 3


@pytest.mark.parametrize("cgroup", [True, False], ids=["cgroup", "marker"])
def test_a_daemon_a_check_leaves_is_killed_and_counted_when_its_trial_ends(
    tmp_path: Path, marker: str, cgroup: bool
) -> None:
    # The check waits until the daemon runs in its session: exiting earlier, its group (killed when
    # the check's shell exits) could take the daemon before it left, and nothing would be left to count.
    check = (
        f"setsid -f bash -c 'echo $$ > daemon.pid; exec -a {marker}-check sleep 300' >/dev/null 2>&1; "
        "until [ -s daemon.pid ]; do sleep 0.01; done"
    )
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "check.eval.yaml").write_text(
        # The check passes on an untouched sandbox too, which is the point here, not a vacuous eval.
        f"prompt_text: hi\nagents: [{{name: quick, script: 'echo ok > out.txt'}}]\n"
        f"negative_control: false\ntrials: {TRIALS}\n"
        f'assert:\n  - succeeds: "{check}"\n'
    )
    process = trialbook(tmp_path, "eval", "evals", "--concurrency", str(TRIALS), cgroup=cgroup)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (out + err).decode()
    assert wait_for_no_survivors(marker) == []
    raw = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    (test,) = raw["tests"]
    assert test["properties"]["process_cleanup"] == ("cgroup" if cgroup else "marker")
    assert test["properties"]["stray_processes_killed"] == TRIALS
