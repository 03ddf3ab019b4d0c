"""Live progress as a person sees it: a real TTY (tmux) shows colour and an ETA; a pipe gets none of it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

from tests.system import ensure

TRIALBOOK = Path(sys.executable).parent / "trialbook"
ETA = re.compile(r"ETA \d+:\d\d")
GUIDE = """
prompt_text: |
  ```bash
  mkdir {root}/first 2>/dev/null || until [ -e {root}/go ]; do sleep 0.02; done
  touch done.txt
  ```
agents: [literal]
trials: 5
assert:
  - file_exists: done.txt
"""
"""The first trial passes at once (so an ETA can be told); the others wait until the test saw it live."""


def _project(root: Path) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "evals/slow.eval.yaml").write_text(textwrap.dedent(GUIDE).lstrip().format(root=root))
    return root


def _tmux(socket: str, *args: str) -> str:
    done = subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=30, check=True
    )
    return done.stdout


def test_a_tty_shows_colour_and_an_eta_that_a_pipe_never_gets(tmp_path: Path) -> None:
    ensure("tmux")  # drives the TTY test; installed on first use
    root = _project(tmp_path / "project")
    socket = f"trialbook-test-{uuid.uuid4().hex[:8]}"
    command = (
        f"cd {root} && env -u NO_COLOR -u FORCE_COLOR CI=true TERM=xterm-256color "
        f"{TRIALBOOK} eval evals --concurrency 1 --results-dir results; echo RUN-ENDED; sleep 60"
    )
    _tmux(socket, "new-session", "-d", "-s", "run", "-x", "200", "-y", "50", command)
    screens: list[str] = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            screen = _tmux(socket, "capture-pane", "-p", "-e", "-t", "run")
            screens.append(screen)
            if ETA.search(screen):
                (root / "go").touch()  # seen live: the waiting trials may end now
            if "RUN-ENDED" in screen:
                break
            time.sleep(0.05)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=30, check=False)
    assert screens and "RUN-ENDED" in screens[-1], screens[-1:]
    live = [screen for screen in screens if ETA.search(screen)]
    assert live, "no screen showed an ETA:\n" + "\n---\n".join(screens[-3:])
    assert any("running" in screen and "waiting" in screen and "elapsed" in screen for screen in live)
    assert "\x1b[32mpass\x1b[0m" in screens[-1] or "\x1b[32mpass" in screens[-1]  # coloured outcome
    assert "[5/5] slow [literal] trial" in screens[-1]

    # The same run into a pipe: plain lines only, no colour, no carriage return, no cursor codes.
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "GITHUB_ACTIONS")}
    piped = subprocess.run(
        [str(TRIALBOOK), "eval", "evals", "--concurrency", "2", "--results-dir", "results2"],
        cwd=root,
        env={**env, "CI": "true", "TERM": "xterm-256color"},
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert piped.returncode == 0, piped.stdout + piped.stderr
    for stream in (piped.stdout, piped.stderr):
        assert b"\x1b" not in stream and b"\r" not in stream
    assert piped.stdout.count(b"start slow [literal] trial") == 5
