"""A signal at concurrency 3 with trials queued behind the running ones leaves no sandbox and no process.

Trials prepare their sandbox before a place among the running trials frees (so the next one is ready at
once); a signal then finds trials running, trials prepared and waiting, and trials not yet prepared.
Every one of them must end up counted as cancelled, with its sandbox gone.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.runner.local import write_script_eval
from trialbook.evidence import load_suite

from .escapes import trialbook, wait_for_no_survivors

TRIALS = 10


def _write_eval(root: Path, marker: str) -> None:
    # The first trial passes at once; every later one says it runs, then hangs.
    script = (
        f"if mkdir {root / 'first'} 2>/dev/null; then echo first; exit 0; fi; "
        f"touch {root}/running-$$; exec -a {marker} sleep 300"
    )
    write_script_eval(
        root / "evals" / "queued.eval.yaml",
        script,
        trials=TRIALS,
        checks="  - succeeds: 'true'\n",
        prompt="wait",
        extra="timeout: 120\n",
    )


@pytest.mark.parametrize("cgroup", [True, False])
def test_a_signal_with_queued_trials_cancels_them_all_and_leaves_nothing(
    tmp_path: Path, marker: str, cgroup: bool
) -> None:
    _write_eval(tmp_path, marker)
    process = trialbook(tmp_path, "eval", "evals", "--concurrency", "3", cgroup=cgroup)
    for _ in range(1200):
        if len(list(tmp_path.glob("running-*"))) >= 3 or process.poll() is not None:
            break
        time.sleep(0.05)
    assert len(list(tmp_path.glob("running-*"))) == 3, "three trials should hang, one per place"
    # The queue has trials prepared (a sandbox each) and waiting for a place.
    assert len(list((tmp_path / "tmp").glob("trialbook-*"))) > 3
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, out.decode() + err.decode()
    assert wait_for_no_survivors(marker) == []
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert [execution.passed for execution in test.executions] == [True]
    assert test.properties["cancelled_trials"] == TRIALS - 1
    assert "Traceback" not in out.decode() + err.decode()
