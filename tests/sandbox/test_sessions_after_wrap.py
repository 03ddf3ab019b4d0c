"""After the pids may have wrapped around, a trial's sessions still name the processes that began in them.

Once pids can have been handed out twice since a trial began (a machine with ``pid_max`` 32768 wraps
every few seconds under a busy test suite), a session id alone no longer tells. But an id stays taken
while its leader is unreaped, so a session reborn under the same id began after trialbook reaped the
command: a process in it that started before that moment is the trial's. Without a cgroup, a process
that cleared the marker and left its group, in its command's session, is found by nothing else.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, running, wait_gone
from trialbook.sandbox import _sweep, run_process
from trialbook.sandbox._procfs import ProcEntry, has_procfs
from trialbook.sandbox._sweep import Criteria, doomed
from trialbook.sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize("listing", ["pid cursor", "every process"])
def test_a_cleared_marker_in_the_commands_session_is_found_after_a_wrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listing: str
) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "off")
    # As after a wrap-around: the fork count no longer rules out a pid handed out twice.
    monkeypatch.setattr(TrialScope, "trusts_sessions", lambda self, now: False)
    if listing == "every process":
        monkeypatch.setattr(_sweep, "span", lambda *_: None)
    scope = supervisor().open_trial()
    pids = tmp_path / "pids"
    try:
        sleeper = f"echo $$ >> {pids}; exec sleep 300 </dev/null >/dev/null 2>&1"  # lets go of the pipes
        script = (
            'python3 -c "import os, sys; os.setpgid(0, 0); '
            f"os.execvp('env', ['env', '-u', '{TRIAL_MARKER}', 'sh', '-c', sys.argv[1]])\" '{sleeper}' &\n"
            f"until [ -s {pids} ]; do sleep 0.01; done; sleep 0.1"
        )
        env = {**ENV, TRIAL_MARKER: scope.marker}
        outcome = asyncio.run(run_process(["bash", "-c", script], cwd=tmp_path, env=env, timeout_s=60))
        assert outcome.returncode == 0, outcome.stderr
        (escaped,) = read_pids(pids)
        assert running(escaped)
        assert scope.sweep() == 1
        assert wait_gone([escaped]) == []
    finally:
        scope.close()
        for pid in read_pids(pids) if pids.exists() else []:  # by pid, should the sweep have missed it
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _entry(pid: int, session: int, started: int | None) -> ProcEntry:
    return ProcEntry(pid, 1, "S", None, session, started)


def test_a_held_session_takes_only_what_started_before_its_command_was_reaped() -> None:
    criteria = Criteria(TRIAL_MARKER, (), held={100: 5000, 200: None})
    entries = [
        _entry(1001, 100, 4999),  # began in the command's session
        _entry(1002, 100, 5000),  # may be in a session reborn under the same id
        _entry(1003, 100, None),  # start unknown: not taken on the session's word
        _entry(1004, 200, 10**9),  # the command is not reaped yet: its id is still held
        _entry(1005, 300, 1),  # another session
    ]
    assert doomed(entries, criteria) == {1001, 1004}
