"""Run a command in a child and read its own peak memory, for the tests that bound trialbook's memory.

The measured process is started by a small launcher, not by the test process: Linux carries a process's
peak RSS across exec, and a child forked from a large pytest worker would inherit the worker's peak. The
launcher puts an address-space limit on the child (so a regression fails by running out of memory rather
than taking the machine with it) and reads its peak RSS with ``wait4``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LAUNCHER", "Measured", "measure"]

LAUNCHER = """
import json, os, resource, sys, time
limit, timeout, err, argv = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.execv(argv[0], argv)
deadline = time.monotonic() + timeout
while True:
    done, status, usage = os.wait4(pid, os.WNOHANG)
    if done:
        break
    if time.monotonic() > deadline:
        os.kill(pid, 9)
        os.wait4(pid, 0)
        print(json.dumps({"timeout": True}))
        sys.exit(0)
    time.sleep(0.05)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "peak_kb": usage.ru_maxrss}))
"""


@dataclass(frozen=True)
class Measured:
    """How the command ended: exit code (``None`` on timeout), its stderr and its peak RSS in KB."""

    code: int | None
    stderr: str
    peak_kb: int


def measure(
    argv: Sequence[str],
    *,
    cwd: Path,
    address_space: int,
    timeout_s: float,
    env: Mapping[str, str] | None = None,
) -> Measured:
    """Run ``argv`` (an absolute program path first) under the launcher; see the module docstring."""
    err_path = cwd / ".measured.err"
    launched = subprocess.run(
        [sys.executable, "-S", "-c", LAUNCHER, str(address_space), str(timeout_s), str(err_path), *argv],
        cwd=cwd, env=None if env is None else dict(env), capture_output=True, text=True, check=True,
        timeout=timeout_s + 30,
    )  # fmt: skip
    outcome = json.loads(launched.stdout)
    stderr = err_path.read_text(encoding="utf-8", errors="replace") if err_path.exists() else ""
    if outcome.get("timeout"):
        return Measured(None, stderr, 0)
    return Measured(int(outcome["code"]), stderr, int(outcome["peak_kb"]))
