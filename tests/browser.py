"""Debian's chromium for the viewer tests, installed with apt-get on first use (as tests.clis does for npm).

Playwright drives it through ``executable_path``; Playwright's own browser download is never used.
``.ci/run`` calls ``python -m tests.browser`` first so the install shows up as its own step.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser")
LOCK = (
    Path(os.environ.get("TRIALBOOK_TEST_CLI_CACHE", Path.home() / ".cache" / "trialbook-test-clis"))
    / ".apt-lock"
)


def _found() -> Path | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return Path(path)
    return None


def ensure_chromium() -> Path:
    """The path of Debian's chromium, installing the package once if it is missing (safe across processes)."""
    found = _found()
    if found is not None:
        return found
    if shutil.which("apt-get") is None:
        raise RuntimeError("the viewer tests need Debian's chromium package: apt-get install -y chromium")
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _found() is None:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            subprocess.run(["apt-get", "update"], check=True, env=env, stdout=sys.stderr)
            subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, env=env, stdout=sys.stderr)
    found = _found()
    if found is None:
        raise RuntimeError("apt-get installed chromium but no chromium binary is on PATH")
    return found


if __name__ == "__main__":
    print(f"chromium: {ensure_chromium()}")
