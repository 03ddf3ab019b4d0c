"""A sandbox the agent made unremovable costs the run nothing but a warning naming it.

As root an agent can mark a file in its folder immutable (``chattr +i``); then no one can remove it, and
the sandbox stays. The trials' verdicts, ``suite.json`` and the ``latest`` link must still be written, the
run must say which folder stayed, and the next run's sweep of left-overs must not stop on it either.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.conftest import Invoke, write
from trialbook.evidence import load_suite


def _immutable_files_work(folder: Path) -> bool:
    probe = folder / "probe"
    probe.touch()
    made = subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode == 0
    subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
    probe.unlink()
    return made


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "tmp"
    folder.mkdir()
    if not _immutable_files_work(folder):
        pytest.skip("chattr +i needs root (CAP_LINUX_IMMUTABLE) and ext4/xfs/btrfs; this machine has neither")
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    yield folder
    subprocess.run(["chattr", "-R", "-i", str(folder)], capture_output=True)


def test_an_immutable_file_in_a_sandbox_keeps_the_verdicts_and_is_reported(
    invoke: Invoke, tmp_path: Path, scratch: Path
) -> None:
    write(
        tmp_path / "evals/stuck.eval.yaml",
        """
        prompt_text: hi
        agents: [{name: s, script: 'mkdir stuck; touch stuck/f; chattr +i stuck/f; echo hi > out.txt'}]
        trials: 2
        negative_control: false
        assert:
          - file_contains: {path: out.txt, pattern: hi}
        """,
    )
    result = invoke("eval", "evals", env={"TMPDIR": str(scratch)})
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.outcome == "passed"
    left = sorted(scratch.glob("trialbook-*"))
    assert len(left) == 2
    for folder in left:
        assert f"warning: could not remove the sandbox {folder}: " in result.stderr
    # The next run's sweep tries again, fails the same way, and still runs.
    again = invoke("eval", "evals", "--force", env={"TMPDIR": str(scratch)})
    assert again.exit_code == 0, again.output
