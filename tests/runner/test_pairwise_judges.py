"""Pairwise judging of ``compare: without`` arms, end to end against loopback chat servers.

An eval runs ``with`` its instruction file and ``without`` it; the script agent writes the marker the
rubric asks for only when the instruction file is in its sandbox. Judges then compare the two arms'
shown material trial by trial, in both orders: one judge follows the rubric (prefers the response that
holds the marker), one always prefers whichever response it was shown first (a position bias: ties),
one answers garbage (errors, never a preference). The servers' request logs are scanned for a secret
the agent wrote into a shown file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .conftest import write


def test_pairwise_without_compare_names_the_file_field_and_fix(tmp_path: Path) -> None:
    write(
        tmp_path / "evals/alone.eval.yaml",
        """
prompt_text: hi
agents: [literal]
assert:
  - judge:
      rubric: the notes explain the failure
      judges: [{provider: openai, model: m}]
      pairwise: true
""",
    )
    trialbook = str(Path(sys.executable).with_name("trialbook"))
    done = subprocess.run(
        [trialbook, "validate", "evals"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    out = done.stdout + done.stderr
    assert (
        "alone.eval.yaml:7: assert[0].judge.pairwise: pairwise judging compares the arms of compare:" in out
    )
    assert "(add compare: without" in out
