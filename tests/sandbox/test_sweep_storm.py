"""A sweep against processes that keep forking: it ends them all, and nothing of a neighbouring trial.

One trial leaves behind, in a session of its own, a shell that forks a child as fast as it can, so new
processes appear while the sweep runs, after each pass has read its listing. Another trial, open at the
same time, left one quiet process of its own. Both mechanisms, and both listings (the pid cursor, and
every process, as where the pids may have wrapped around): the storm must end, every child it made must
be gone, and the neighbour's process must still run until its own trial ends.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.lifecycle.escapes import survivors, wait_for_no_survivors
from tests.sandbox.procs import read_pids, running, wait_gone
from trialbook.sandbox import _sweep, run_process
from trialbook.sandbox._procfs import has_procfs
from trialbook.sandbox.supervisor import TRIAL_MARKER, TrialScope, supervisor

pytestmark = pytest.mark.skipif(not has_procfs(), reason="no /proc on this system (documented limit)")

ENV = {"PATH": "/usr/bin:/bin"}


def _run(scope: TrialScope, script: str, cwd: Path) -> None:
    env = {**ENV, TRIAL_MARKER: scope.marker}
    outcome = asyncio.run(run_process(["bash", "-c", script], cwd=cwd, env=env, timeout_s=60))
    assert outcome.returncode == 0, outcome.stderr


@pytest.mark.parametrize("listing", ["pid cursor", "every process"])
@pytest.mark.parametrize("mechanism", ["cgroup", "marker"])
def test_a_forking_storm_ends_and_the_neighbour_keeps_its_process(
    tmp_path: Path, marker: str, mechanism: str, listing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRIALBOOK_CGROUP", "on" if mechanism == "cgroup" else "off")
    if listing == "every process":
        monkeypatch.setattr(_sweep, "span", lambda *_: None)
    storming, neighbour = supervisor().open_trial(), supervisor().open_trial()
    try:
        assert storming.mechanism == neighbour.mechanism == mechanism
        quiet = tmp_path / "quiet"
        _run(
            neighbour,
            f"setsid -f sh -c 'echo $$ > {quiet}; exec sleep 300' </dev/null >/dev/null 2>&1; "
            f"until [ -s {quiet} ]; do sleep 0.01; done",
            tmp_path,
        )
        (other,) = read_pids(quiet)
        # A storm of children that each live long; the test waits until a few dozen run.
        storm = (
            f"setsid -f bash -c 'while :; do (exec -a {marker}-storm sleep 300) & done' >/dev/null 2>&1\n"
            f"until [ \"$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -c \"^{marker}-\")\""
            " -ge 50 ]; do sleep 0.01; done"
        )
        _run(storming, storm, tmp_path)
        assert len(survivors(marker)) >= 50
        killed = storming.sweep()
        assert killed >= 51  # the forking shell and at least the children seen before the sweep
        assert wait_for_no_survivors(marker) == []
        assert storming.close() == 0
        assert storming.killed == killed
        assert running(other)
        assert neighbour.close() == 1
        assert wait_gone([other]) == []
    finally:
        storming.close()
        neighbour.close()
