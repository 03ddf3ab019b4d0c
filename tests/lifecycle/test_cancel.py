"""SIGINT and SIGTERM end a real ``trialbook eval`` as a recorded outcome, with nothing left running.

The eval has two trials run one at a time: the first passes at once, the second starts a process by each
way of escaping (background job, nohup, setsid, setsid -f, double fork, setpgid) and hangs. The signal
arrives once all of them run.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from trialbook.evidence import load_suite

from .escapes import TRIALBOOK, trialbook, wait_for_no_survivors, write_eval

SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM}


def _wait_ready(tmp_path: Path, process: subprocess.Popen[bytes]) -> None:
    for _ in range(1200):
        if (tmp_path / "ready").exists():
            return
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    out, err = process.communicate()
    pytest.fail(f"the escaping trial never got ready:\n{out.decode()}\n{err.decode()}")


def _run_and_signal(tmp_path: Path, sig: int, *, cgroup: bool, twice: bool = False) -> tuple[int, str, str]:
    args = ("eval", "evals", "--concurrency", "1", "--history-dir", "hist")
    process = trialbook(tmp_path, *args, "--junit", "junit.xml", "--summary", "summary.md", cgroup=cgroup)
    _wait_ready(tmp_path, process)
    process.send_signal(sig)
    taken = b""
    if twice:
        # The second only once trialbook says it took the first: two sent at once can arrive as one.
        assert process.stderr is not None
        for line in process.stderr:
            taken += line
            if b"stopping the running trials" in line:
                break
        process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    return process.returncode, out.decode(), (taken + err).decode()


@pytest.mark.parametrize("agent", ["script", "literal"])
@pytest.mark.parametrize("name", SIGNALS)
def test_a_signal_records_what_finished_and_kills_the_rest(
    tmp_path: Path, marker: str, agent: str, name: str
) -> None:
    sig = SIGNALS[name]
    write_eval(tmp_path, agent, marker, then="sleep 300", trials=2)
    code, out, err = _run_and_signal(tmp_path, sig, cgroup=agent == "script")
    assert code == 128 + sig, out + err
    assert wait_for_no_survivors(marker) == []
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []
    # No click "Aborted!", no traceback, no asyncio "exception was never retrieved".
    for noise in ("Aborted", "Traceback", "never retrieved", "Task was destroyed"):
        assert noise not in out + err
    assert f"cancelled by {name}" in out
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.outcome == "incomplete"
    assert [execution.passed for execution in test.executions] == [True]
    assert test.properties["cancelled_trials"] == 1
    assert 'errors="1"' in (tmp_path / "junit.xml").read_text()
    assert "not finished: run cancelled" in (tmp_path / "summary.md").read_text()
    # The finished trial is kept in history as an incomplete line, which never serves as a cache.
    (line,) = [json.loads(raw) for raw in (tmp_path / "hist/escape.jsonl").read_text().splitlines()]
    assert (line["verdict"], line["trials"], line["passed"]) == ("incomplete", 1, 1)
    plan = subprocess.run(
        [str(TRIALBOOK), "eval", "evals", "--history-dir", "hist", "--dry-run"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "CI": "true"},
        check=True,
    )
    assert plan.stdout.startswith("run "), plan.stdout


def test_a_second_signal_stops_at_once_and_leaves_no_process(tmp_path: Path, marker: str) -> None:
    write_eval(tmp_path, "script", marker, then="trap '' TERM; sleep 300", trials=2)
    # The agents ignore SIGTERM and sleep 300 s: a run that did not stop would outlive the test's deadline.
    code, out, err = _run_and_signal(tmp_path, signal.SIGTERM, cgroup=False, twice=True)
    assert code == 143, out + err
    assert "stopping at once" in err
    assert wait_for_no_survivors(marker) == []
    assert "Traceback" not in out + err
    suite_path = tmp_path / ".trialbook/runs/latest/suite.json"
    if suite_path.exists():  # written whole or not at all
        load_suite(suite_path)
