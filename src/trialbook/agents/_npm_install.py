"""An agent CLI at the version an eval asks for (``version: 2.1.197`` or ``version: latest``), from npm.

The point is a canary beside the pin: the same evals on the pinned agent and on the newest release, so a
team learns that an agent upgrade breaks its prompts before it upgrades. Each version is installed once
with ``npm install --prefix`` into its own folder of a cache shared by runs and processes (under a lock),
and never changes after: a version is an exact release. A dist-tag (``latest``, ``next``) is resolved
with ``npm view`` once per process, so every trial of a run uses the same release.

The cache is ``TRIALBOOK_AGENT_CACHE``, else ``$XDG_CACHE_HOME/trialbook/agents`` (``~/.cache``).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

__all__ = ["VERSION", "agent_cache", "installed_binary"]

VERSION = r"(?:\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?|[a-z][a-z0-9-]{0,31})"
"""An exact release (``2.1.197``, ``1.0.0-beta.2``) or an npm dist-tag (``latest``, ``next``)."""

_EXACT = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")
_TIMEOUT_S = 600
_resolved: dict[tuple[str, str], str] = {}
_lock = threading.Lock()
_QUIET = {"NPM_CONFIG_UPDATE_NOTIFIER": "false", "NPM_CONFIG_FUND": "false", "NPM_CONFIG_AUDIT": "false"}


def agent_cache(environ: dict[str, str] | None = None) -> Path:
    """Where installed agent versions are kept."""
    env = os.environ if environ is None else environ
    if env.get("TRIALBOOK_AGENT_CACHE"):
        return Path(env["TRIALBOOK_AGENT_CACHE"])
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trialbook" / "agents"


def _npm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npm", *args],
        capture_output=True,
        text=True,
        timeout=_TIMEOUT_S,
        check=False,
        env={**os.environ, **_QUIET},
    )


def _said(stderr: str, default: str) -> str:
    """The reason npm gave, without its pointers to the debug log."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and "complete log" not in line]
    reasons = [line for line in lines if "code E" not in line and line != "npm error"]
    return "; ".join(reasons[:2]) or default


def _resolve(package: str, version: str) -> tuple[str | None, str | None]:
    if _EXACT.fullmatch(version):
        return version, None
    with _lock:
        if (package, version) in _resolved:
            return _resolved[(package, version)], None
    done = _npm("view", f"{package}@{version}", "version")
    found = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    if not found or not _EXACT.fullmatch(found[0]):
        return (
            None,
            f"npm cannot resolve {package}@{version}: {_said(done.stderr, 'no version in its answer')}",
        )
    with _lock:
        _resolved[(package, version)] = found[0]
    return found[0], None


def installed_binary(package: str, version: str, command: str) -> tuple[Path | None, str | None, str | None]:
    """``command`` of ``package`` at ``version``: its path, the exact version, or ``None`` and why not."""
    if shutil.which("npm") is None:
        return None, None, f"npm is needed to install {package}@{version}; install Node.js, or use binary:"
    exact, problem = _resolve(package, version)
    if exact is None:
        return None, None, problem
    cache = agent_cache()
    prefix = cache / f"{package.replace('/', '__').lstrip('@')}-{exact}"
    target = prefix / "node_modules" / ".bin" / command
    if target.exists():
        return target, exact, None
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with open(cache / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.exists():
                prefix.mkdir(parents=True, exist_ok=True)
                done = _npm("install", "--prefix", str(prefix), "--no-save", f"{package}@{exact}")
                if done.returncode != 0:
                    return (
                        None,
                        exact,
                        f"npm install {package}@{exact} failed: {_said(done.stderr, 'no message')}",
                    )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, exact, f"installing {package}@{exact} into {cache} failed: {exc}"
    if not target.exists():
        return None, exact, f"npm installed {package}@{exact}, but {target} is missing"
    return target, exact, None
