"""Eval files whose agents try every way of leaving their process tree, and ways to see what survived.

Each escaping process is a ``sleep`` whose ``argv[0]`` carries a marker unique to the test, so a survivor
is found by scanning every process's command line, whatever its parent, session or group became.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Mapping
from pathlib import Path

from tests.sandbox.procs import wait_gone

__all__ = [
    "ESCAPES",
    "TRIALBOOK",
    "escape_steps",
    "kill_survivors",
    "survivors",
    "trialbook",
    "unique_marker",
    "wait_for_no_survivors",
    "write_eval",
]

ESCAPES = ("bg", "nohup", "setsid", "setsidf", "daemon", "pgid")
"""One process per way out: a background job, nohup, setsid, setsid -f, a double fork, its own group."""

TRIALBOOK = Path(sys.executable).parent / "trialbook"


def unique_marker() -> str:
    """A string no other process on the machine has in its command line."""
    return f"tbesc{uuid.uuid4().hex[:12]}"


def escape_steps(marker: str, ready: Path, then: str) -> str:
    """Bash starting one process per way of escaping; touches ``ready`` once all run, then runs ``then``."""
    return textwrap.dedent(
        f"""\
        M={marker}
        (exec -a $M-bg sleep 300) &
        nohup bash -c "exec -a $M-nohup sleep 300" >/dev/null 2>&1 &
        setsid bash -c "exec -a $M-setsid sleep 300" >/dev/null 2>&1 &
        setsid -f bash -c "exec -a $M-setsidf sleep 300" >/dev/null 2>&1
        ( ( exec -a $M-daemon sleep 300 ) & )
        python3 -c "import os; os.setpgid(0, 0); os.execvp('sleep', ['$M-pgid', '300'])" >/dev/null 2>&1 &
        until [ "$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' '\\n' | grep -c "^$M-")" -ge 6 ]; do
          sleep 0.05
        done
        touch {ready}
        {then}
        """
    )


def write_eval(root: Path, agent: str, marker: str, *, then: str, timeout: int = 60, trials: int = 1) -> Path:
    """``evals/escape.eval.yaml`` with a script or literal agent running :func:`escape_steps`.

    The agent touches ``root/ready`` once every escaping process runs. With several trials, the first
    one to start passes at once and the others escape, so a signal finds one trial finished.
    """
    steps = escape_steps(marker, root / "ready", then)
    if trials > 1:
        steps = f"if mkdir {root / 'first-trial'} 2>/dev/null; then\n  echo first\nelse\n{steps}fi\n"
    if agent == "script":
        body = "prompt_text: start things and leave\nagents:\n  - name: escaper\n    script: |\n"
        body += textwrap.indent(steps, "      ")
    else:
        fence = "```"
        prompt = f"Start things.\n\n{fence}bash\n{steps}{fence}\n"
        body = "agents: [literal]\nprompt_text: |\n" + textwrap.indent(prompt, "  ")
    body += f"timeout: {timeout}\ntrials: {trials}\nassert:\n  - succeeds: 'true'\n"
    path = root / "evals" / "escape.eval.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body)
    return path


def _carrying(marker: str) -> dict[int, str]:
    """The live processes (zombies excluded) that carry ``marker``: pid → command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in {"Z", "X"}:
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def survivors(marker: str) -> list[str]:
    """Command lines of the live processes (zombies excluded) that carry ``marker``."""
    return list(_carrying(marker).values())


def wait_for_no_survivors(marker: str) -> list[str]:
    """The command lines of the processes carrying ``marker`` still running once those found have ended.

    A SIGKILLed process needs a moment to die: each one found is waited for through a pidfd (see
    :func:`tests.sandbox.procs.wait_gone`), then the machine is looked at again.
    """
    wait_gone(list(_carrying(marker)))
    return survivors(marker)


def kill_survivors(marker: str) -> None:
    """Clean up after a failing test, by pid, so one failure does not leak sleeps into the next."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    os.kill(int(entry.name), 9)
            except OSError:
                continue


def trialbook(
    root: Path, *args: str, cgroup: bool, env: Mapping[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start a real ``trialbook`` process in ``root`` with its own temp folder (where sandboxes go)."""
    tmp = root / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "CI": "true",
        "TMPDIR": str(tmp),
        "TRIALBOOK_CGROUP": "on" if cgroup else "off",
        **(env or {}),
    }
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.Popen(
        [str(TRIALBOOK), *args],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
