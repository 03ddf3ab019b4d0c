"""`trialbook report` renders for where it prints: a table on a terminal, Markdown into a pipe or a file."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

TRIALBOOK = Path(sys.executable).parent / "trialbook"
EVAL = """prompt_text: |
  ```bash
  touch made.txt
  ```
agents: [literal]
negative_control: false
assert:
  - file_exists: made.txt
  - file_contains: {path: made.txt, pattern: "hello"}
"""


def _run(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/e.eval.yaml").write_text(EVAL)
    done = subprocess.run(
        [str(TRIALBOOK), "eval", "evals"], cwd=tmp_path, env={**os.environ, "CI": "true"},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr


def _on_a_terminal(tmp_path: Path, *args: str) -> str:
    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [str(TRIALBOOK), "report", *args], cwd=tmp_path, stdout=follower, stderr=subprocess.PIPE,
            timeout=120, check=False,
        )  # fmt: skip
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_terminal_gets_the_table_and_a_pipe_gets_markdown(tmp_path: Path) -> None:
    _run(tmp_path)
    shown = _on_a_terminal(tmp_path)
    assert shown.splitlines()[0].split() == ["eval", "agent", "passed", "(95%", "CI)", "verdict", "cost",
                                             "duration", "note"]  # fmt: skip
    assert "<details>" not in shown and "| Eval |" not in shown and "artifact link" not in shown
    assert "what failed:" in shown and 'no match for "hello" in made.txt' in shown
    piped = subprocess.run(
        [str(TRIALBOOK), "report"], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    assert piped.startswith("## trialbook evals") and "| Eval |" in piped
    assert _on_a_terminal(tmp_path, "--format", "markdown").startswith("## trialbook evals")
