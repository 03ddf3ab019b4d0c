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


THREE_FAILURES = """
prompt_text: |
  ```bash
  printf 'port = 3000\\n' > app.toml
  ```
agents: [literal]
negative_control: false
assert:
  - file_contains: {path: app.toml, pattern: "host = localhost"}
  - file_contains: {path: app.toml, pattern: "/^workers = [0-9]+$/"}
  - file_exists: README.md
"""


def test_a_terminal_shows_every_failed_check_of_a_trial_with_its_pattern(tmp_path: Path) -> None:
    ensure("tmux")
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/three.eval.yaml").write_text(textwrap.dedent(THREE_FAILURES).lstrip())
    socket = f"trialbook-test-{uuid.uuid4().hex[:8]}"
    command = f"cd {tmp_path} && CI=true TERM=xterm-256color {TRIALBOOK} eval evals; echo RUN-ENDED; sleep 60"
    _tmux(socket, "new-session", "-d", "-s", "run", "-x", "160", "-y", "50", command)
    screen = ""
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "RUN-ENDED" not in screen:
            screen = _tmux(socket, "capture-pane", "-p", "-t", "run")
            time.sleep(0.05)
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=30, check=False)
    assert "RUN-ENDED" in screen, screen
    lines = screen.splitlines()
    (at,) = [i for i, line in enumerate(lines) if "three [literal] trial 1: FAIL" in line]
    shown = "\n".join(lines[at : at + 4])
    assert 'no match for "host = localhost" in app.toml' in shown, shown
    assert 'no match for "/^workers = [0-9]+$/" in app.toml' in shown, shown
    assert "file_exists" in shown and "README.md" in shown, shown
    assert "more)" not in shown
    assert all(len(line) <= 160 for line in lines)
