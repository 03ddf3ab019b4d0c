"""What a ``kill -9`` leaves (sandboxes, temp files of writes, trial processes) is swept by the next start
and by ``trialbook clean``; what belongs to a live process, or carries no owner, is left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from trialbook._util.owner import owner_tag, start_time

from .escapes import (
    TRIALBOOK,
    survivors,
    trialbook,
    wait_for_no_survivors,
    write_eval,
)


def _killed_run(tmp_path: Path, marker: str) -> tuple[Path, Path]:
    """A run killed with SIGKILL mid-trial; returns a temp file it 'was writing' and a live one's."""
    write_eval(tmp_path, "script", marker, then="sleep 300", timeout=120)
    process = trialbook(tmp_path, "eval", "evals", cgroup=False)
    for _ in range(1200):
        if (tmp_path / "ready").exists() or process.poll() is not None:
            break
        time.sleep(0.05)
    assert (tmp_path / "ready").exists(), process.communicate()
    tag = f"{process.pid}_{start_time(process.pid)}"
    results = tmp_path / ".trialbook"
    # An interrupted atomic write of the killed process, and one of a process that still runs (this one).
    dead_tmp = results / f".suite.json.{tag}.k9x2_abc.tmp"
    live_tmp = results / f".suite.json.{owner_tag()}.live1234.tmp"
    for path in (dead_tmp, live_tmp):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{")
    assert list((tmp_path / "tmp").glob("trialbook-*")), "the run has no sandbox to leave behind"
    assert survivors(marker), "the run has no process to leave behind"
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    # What it left is only this test's, except its processes: any trialbook run starting on the machine
    # now (another test's) may already sweep those, as it should.
    assert list((tmp_path / "tmp").glob("trialbook-*")), "the killed run left no sandbox to sweep"
    return dead_tmp, live_tmp


def _quick_eval(tmp_path: Path) -> None:
    (tmp_path / "evals" / "escape.eval.yaml").write_text(
        "prompt_text: hi\nagents: [{name: quick, script: 'touch done'}]\nassert:\n  - file_exists: done\n"
    )


def test_the_next_run_sweeps_what_a_kill_9_left(tmp_path: Path, marker: str) -> None:
    dead_tmp, live_tmp = _killed_run(tmp_path, marker)
    foreign = tmp_path / "tmp" / "trialbook-not-ours"  # no owner tag: never touched
    foreign.mkdir()
    _quick_eval(tmp_path)
    process = trialbook(tmp_path, "eval", "evals", cgroup=False)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, (out + err).decode()
    assert sorted(p.name for p in (tmp_path / "tmp").glob("trialbook-*")) == ["trialbook-not-ours"]
    assert not dead_tmp.exists()
    assert live_tmp.exists()
    assert wait_for_no_survivors(marker) == []


def test_trialbook_clean_sweeps_on_demand(tmp_path: Path, marker: str) -> None:
    dead_tmp, live_tmp = _killed_run(tmp_path, marker)
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    done = subprocess.run(
        [str(TRIALBOOK), "clean"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert f"removed {dead_tmp}" in done.stdout
    assert list((tmp_path / "tmp").glob("trialbook-*")) == []
    assert not dead_tmp.exists() and live_tmp.exists()
    assert wait_for_no_survivors(marker) == []
    again = subprocess.run(
        [str(TRIALBOOK), "clean"], cwd=tmp_path, env=env, capture_output=True, text=True, check=True
    )
    assert "removed" not in again.stdout
