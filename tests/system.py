"""Debian packages the tests drive, installed with apt-get on first use (as tests.clis does for npm).

Each test that needs an outside program asks for it here: the README's test command alone then works on
a fresh machine, and ``.ci/run`` calls ``python -m tests.system`` first only so the installs show up as a
step of their own. One lock serialises apt-get across xdist workers and test runs.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGES: dict[str, tuple[str, ...]] = {
    "chromium": ("chromium", "chromium-browser"),  # the viewer tests' headless browser
    "xfsprogs": ("mkfs.xfs",),  # the reflink-capable filesystem the copy tests clone on
    "tmux": ("tmux",),  # the terminal the live-progress test reads
    "bubblewrap": ("bwrap",),  # bwrap, the unprivileged namespace sandbox
}
"""Package → the binaries that show it is installed (any one of them)."""

LOCK = (
    Path(os.environ.get("TRIALBOOK_TEST_CLI_CACHE", Path.home() / ".cache" / "trialbook-test-clis"))
    / ".apt-lock"
)
_SEARCH = os.pathsep.join([os.environ.get("PATH", os.defpath), "/usr/sbin", "/sbin"])


def _found(package: str) -> Path | None:
    for name in PACKAGES[package]:
        path = shutil.which(name, path=_SEARCH)
        if path:
            return Path(path)
    return None


def ensure(package: str) -> Path:
    """The path of ``package``'s binary, installing the package once if it is missing."""
    found = _found(package)
    if found is not None:
        return found
    if shutil.which("apt-get") is None:
        raise RuntimeError(f"these tests need Debian's {package} package: apt-get install -y {package}")
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _found(package) is None:
            env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
            subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, stdout=sys.stderr)
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", package], check=True, env=env, stdout=sys.stderr
            )
    found = _found(package)
    if found is None:
        raise RuntimeError(f"apt-get installed {package} but none of {PACKAGES[package]} is on PATH")
    return found


def main() -> None:
    """Install every package the tests use (``python -m tests.system``)."""
    for package in PACKAGES:
        print(f"{package}: {ensure(package)}")


if __name__ == "__main__":
    main()
