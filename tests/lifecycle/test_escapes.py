"""No process outlives its trial: every way out of the process tree is closed at the timeout.

A real ``trialbook eval`` runs script and literal agents that start a background job, ``nohup``,
``setsid``, ``setsid -f``, a double-forked daemon and a ``setpgid`` child, then hang. Both mechanisms are
attacked: the per-trial cgroup (this machine offers cgroup v2) and the marker-and-tree sweep used where
it is not delegated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.deadlines import growing
from trialbook.evidence import load_suite

from .escapes import trialbook, wait_for_no_survivors, write_eval

AGENTS = ("script", "literal")
MECHANISMS = {"cgroup": True, "marker": False}


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_at_the_timeout_nothing_the_agent_started_survives(
    tmp_path: Path, marker: str, agent: str, mechanism: str
) -> None:
    for timeout in growing(3):  # until the escaping processes all started before the timeout
        root = tmp_path / f"timeout-{timeout:g}"
        root.mkdir()
        write_eval(root, agent, marker, then="sleep 300", timeout=int(timeout))
        process = trialbook(root, "eval", "evals", cgroup=MECHANISMS[mechanism])
        out, err = process.communicate(timeout=120 + timeout)
        assert process.returncode == 1, (out + err).decode()
        assert wait_for_no_survivors(marker) == []  # a run cut short before all started, too
        assert list((root / "tmp").glob("trialbook-*")) == []
        if (root / "ready").exists():
            break
    else:
        pytest.fail("the escaping processes never all started")
    suite = load_suite(root / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.outcome == "failed"
    assert test.executions[0].result.stop_reason == "timeout"
    raw = json.loads((root / ".trialbook/runs/latest/suite.json").read_text())
    properties = raw["tests"][0]["properties"]
    assert properties["process_cleanup"] == mechanism
    # The group kill at the deadline takes the four that stayed in it (background job, nohup, double
    # fork, the agent's own sleep); the other three (setsid, setsid -f, setpgid) are strays, counted alike
    # by both mechanisms: the cgroup's members before cgroup.kill, or what the marker sweep kills. One of
    # the group still dying when the trial's processes are counted (a busy machine) is no stray.
    assert properties["stray_processes_killed"] == 3


@pytest.mark.parametrize("agent", AGENTS)
def test_what_the_agent_left_running_is_gone_before_the_checks_run(
    tmp_path: Path, marker: str, agent: str
) -> None:
    write_eval(tmp_path, agent, marker, then="echo done", timeout=60)
    evals = tmp_path / "evals" / "escape.eval.yaml"
    check = f"! cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\\\0' '\\\\n' | grep -q '^{marker}-'"
    # The check scans every process on the machine, so the negative control (an untouched sandbox run
    # beside the trial) would pass or fail by timing alone: it is turned off, as the check is about
    # the trial's own processes.
    body = evals.read_text().replace("succeeds: 'true'", f'succeeds: "{check}"')
    evals.write_text("negative_control: false\n" + body)
    process = trialbook(tmp_path, "eval", "evals", cgroup=False)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (out + err).decode()
    assert wait_for_no_survivors(marker) == []
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []


def test_what_a_succeeds_check_starts_ends_with_the_trial(tmp_path: Path, marker: str) -> None:
    check = (
        f"setsid -f bash -c 'exec -a {marker}-check sleep 300' >/dev/null 2>&1; "
        f"( ( exec -a {marker}-checkd sleep 300 ) & ) ; true"
    )
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "check.eval.yaml").write_text(
        # The check passes on an untouched sandbox too, which is the point here, not a vacuous eval.
        f"prompt_text: hi\nagents: [{{name: quick, script: 'true'}}]\nnegative_control: false\n"
        f'assert:\n  - succeeds: "{check}"\n'
    )
    process = trialbook(tmp_path, "eval", "evals", cgroup=False)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (out + err).decode()
    assert wait_for_no_survivors(marker) == []
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []
