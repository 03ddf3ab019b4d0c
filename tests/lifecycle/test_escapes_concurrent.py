"""Trials side by side, each escaping every way and in bulk: each kills exactly its own, and counts them.

A real ``trialbook eval`` runs one eval whose trials all run at once. Each trial starts, under a marker of
its own (the trial shell's pid), a ``setsid -f`` process, a new session holding a burst of 200 children,
a process that clears its environment and leaves its group (its session still names the trial), and
processes that stay in the agent's group (a background job, ``nohup``, a double fork), then waits until
all of them run and exits. The sweeps must end every one of them without touching a neighbour's, and
``stray_processes_killed`` must count exactly the ones that left the agent's group, summed over trials.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from .escapes import trialbook, wait_for_no_survivors

BURST = 200
STRAYS_PER_TRIAL = 1 + (1 + BURST) + 1
"""The ``setsid -f`` sleep, the burst's shell and its children, the cleared-environment sleep."""
IN_GROUP_PER_TRIAL = 3
TRIALS = 4


def _script(marker: str, ready: Path) -> str:
    total = STRAYS_PER_TRIAL - 1 + IN_GROUP_PER_TRIAL  # the burst's shell carries no marker of its own
    return textwrap.dedent(
        f"""\
        M={marker}-$$
        setsid -f bash -c "exec -a $M-setsidf sleep 300" >/dev/null 2>&1
        setsid -f bash -c 'for i in $(seq {BURST}); do (exec -a '$M'-burst sleep 300) & done; wait' \\
          >/dev/null 2>&1
        python3 -c "import os; os.setpgid(0, 0); os.execvp('env', ['env', '-i', 'bash', '-c', \\
          'exec -a $M-clean sleep 300'])" >/dev/null 2>&1 &
        (exec -a $M-bg sleep 300) &
        nohup bash -c "exec -a $M-nohup sleep 300" >/dev/null 2>&1 &
        ( ( exec -a $M-daemon sleep 300 ) & )
        until [ "$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -c "^$M-")" -ge {total} ]; do
          sleep 0.05
        done
        touch {ready}-$$
        """
    )


@pytest.mark.parametrize("mechanism", ["cgroup", "marker"])
def test_trials_at_once_each_kill_exactly_their_own_escapes(
    tmp_path: Path, marker: str, mechanism: str
) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    body = "prompt_text: escape in bulk\nagents:\n  - name: escaper\n    script: |\n"
    body += textwrap.indent(_script(marker, tmp_path / "ready"), "      ")
    body += f"trials: {TRIALS}\ntimeout: 60\nnegative_control: false\nassert:\n  - succeeds: 'true'\n"
    (evals / "bulk.eval.yaml").write_text(body)
    process = trialbook(tmp_path, "eval", "evals", "--concurrency", str(TRIALS), cgroup=mechanism == "cgroup")
    out, err = process.communicate(timeout=150)
    assert process.returncode == 0, (out + err).decode()
    assert len(list(tmp_path.glob("ready-*"))) == TRIALS, "not every trial's escapes all started"
    assert wait_for_no_survivors(marker) == []
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []
    raw = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    properties = raw["tests"][0]["properties"]
    assert properties["process_cleanup"] == mechanism
    # The trial's processes are counted right after the agent's group is killed: one of that group still
    # dying then (a background job, on a busy machine) is no stray, under either mechanism.
    assert properties["stray_processes_killed"] == TRIALS * STRAYS_PER_TRIAL


@pytest.mark.parametrize("mechanism", ["cgroup", "marker"])
def test_at_concurrency_one_a_trial_never_sees_the_escapes_of_the_one_before(
    tmp_path: Path, marker: str, mechanism: str
) -> None:
    """A trial's place is given back only once its processes are gone, not merely once its agent ended."""
    script = textwrap.dedent(
        f"""\
        if cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -q "^{marker}-"; then
          echo "a process of an earlier trial is still running"; exit 7
        fi
        setsid -f bash -c "exec -a {marker}-$$ sleep 300" >/dev/null 2>&1
        until cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -q "^{marker}-$$"; do
          sleep 0.02
        done
        """
    )
    evals = tmp_path / "evals"
    evals.mkdir()
    body = "prompt_text: escape once\nagents:\n  - name: escaper\n    script: |\n"
    body += textwrap.indent(script, "      ")
    body += "trials: 4\ntimeout: 60\nnegative_control: false\nassert:\n  - succeeds: 'true'\n"
    (evals / "serial.eval.yaml").write_text(body)
    process = trialbook(tmp_path, "eval", "evals", "--concurrency", "1", cgroup=mechanism == "cgroup")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (out + err).decode()
    assert wait_for_no_survivors(marker) == []
    raw = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    assert raw["tests"][0]["properties"]["stray_processes_killed"] == 4


@pytest.mark.parametrize("mechanism", ["cgroup", "marker"])
def test_what_checks_of_trials_at_once_start_ends_with_each_and_is_counted(
    tmp_path: Path, marker: str, mechanism: str
) -> None:
    # The check waits until its escapee runs: one killed with the check's group before ``setsid``
    # took it out is no stray, and would make the count a race. The pattern is anchored, not ``-x``:
    # grep's own command line holds its pattern as a line of its own, and ``-x "$M"`` would find that.
    check = textwrap.dedent(
        f"""\
        M={marker}-check-$$
        setsid -f bash -c "exec -a $M sleep 300" >/dev/null 2>&1
        until cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -q "^$M$"; do sleep 0.02; done
        """
    )
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "check.eval.yaml").write_text(
        # The check passes on an untouched sandbox too, which is the point here, not a vacuous eval.
        "prompt_text: hi\nagents: [{name: quick, script: 'true'}]\nnegative_control: false\n"
        "trials: 3\nassert:\n  - succeeds: |\n" + textwrap.indent(check, "      ")
    )
    process = trialbook(tmp_path, "eval", "evals", "--concurrency", "3", cgroup=mechanism == "cgroup")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (out + err).decode()
    assert wait_for_no_survivors(marker) == []
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []
    properties = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())["tests"][0][
        "properties"
    ]
    assert properties["process_cleanup"] == mechanism
    assert properties["stray_processes_killed"] == 3
