"""Checks end in bounded time: a check that never returns meets the check deadline, and one signal ends
the run within seconds whatever a check is doing, writing what finished and marking the rest incomplete.

Each eval's agent finishes at once; the busy part is a check: an ``assert_that`` function that loops
forever, or a ``succeeds`` command that ignores SIGTERM. The check touches ``busy`` when it starts, so
the signal is sent once it is busy, never on a timer.
"""

from __future__ import annotations

import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from trialbook.evidence import load_suite

from .escapes import trialbook

LOOPING_CHECK = """\
from pathlib import Path


def spin(trial):
    Path({busy!r}).touch()
    while True:  # never returns: only a deadline or the end of the process stops it
        pass
"""


def _write(root: Path, check: str, *, limits: str = "") -> None:
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals/checks.py").write_text(LOOPING_CHECK.format(busy=str(root / "busy")))
    busy = root / "busy"
    checks = {
        "loop": "  - assert_that: {name: spin, check: 'checks:spin'}\n",
        "stubborn": f"  - succeeds: \"trap '' TERM; touch {busy}; sleep 1000; true\"\n",
    }[check]
    (root / "evals/busy.eval.yaml").write_text(
        textwrap.dedent(
            f"""\
            prompt_text: write out.txt
            agents: [{{name: quick, script: "printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab' > out.txt"}}]
            negative_control: false
            {limits}
            assert:
              - file_contains: {{path: out.txt, pattern: "/^(a+)+$/"}}
            """
        )
        + checks
    )


def _wait_busy(root: Path, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120  # a bound on the test, not on trialbook's speed
    while not (root / "busy").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"the check never started:\n{out.decode()}\n{err.decode()}")
        time.sleep(0.05)


def test_a_check_that_never_returns_ends_its_trial_at_the_check_deadline(tmp_path: Path) -> None:
    _write(tmp_path, "loop", limits="limits: {checks: 2s}")
    process = trialbook(tmp_path, "eval", "evals", cgroup=False)
    # Without the deadline the check never returns: the run ending at all is the property tested.
    out, err = process.communicate(timeout=120)
    assert process.returncode == 1, out.decode() + err.decode()
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.outcome == "error"
    (execution,) = test.executions
    assert execution.result.stop_reason == "execution_error"
    assert execution.result.error is not None
    assert 'assert_that "spin" was still running' in execution.result.error
    assert "check deadline of 2s" in execution.result.error
    # The pattern before it was checked (and matched nothing, in linear time); the loop is the error.
    first, second = execution.assertions
    assert (first.kind, first.passed, first.error) == ("file_contains", False, None)
    assert second.error == "did not finish within the check deadline of 2s"
    assert "check deadline" in out.decode()


@pytest.mark.parametrize("check", ["loop", "stubborn"])
def test_one_sigterm_while_a_check_is_busy_ends_the_run_with_143_and_an_incomplete_trial(
    tmp_path: Path, check: str
) -> None:
    _write(tmp_path, check)  # the default deadline (60 s + the succeeds timeout) is far away
    process = trialbook(tmp_path, "eval", "evals", cgroup=True)
    _wait_busy(tmp_path, process)
    process.send_signal(signal.SIGTERM)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 143, out.decode() + err.decode()
    for noise in ("Traceback", "never retrieved", "Task was destroyed"):
        assert noise not in out.decode() + err.decode()
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.outcome == "incomplete"
    assert test.properties["cancelled_trials"] == 1
