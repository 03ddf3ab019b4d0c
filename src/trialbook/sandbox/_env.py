"""The environment a trial's processes get: built from scratch, never copied from the runner's.

Starting from nothing means a token in the runner's environment cannot leak into an agent's shell unless
an eval declares it as a secret or an adapter documents it.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["XDG_DIRS", "build_env"]

XDG_DIRS: dict[str, str] = {
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
    "XDG_DATA_HOME": ".local/share",
    "XDG_STATE_HOME": ".local/state",
}
"""The XDG base directories, relative to the isolated HOME, so tools keep their state in the trial."""


_USERS: dict[int, str] = {}


def _user() -> str:
    # Looked up once per uid: without LOGNAME or USER set, getuser reads the passwd database, a file
    # opened and parsed for every trial otherwise. The variables are read each time, as getuser does.
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if value := os.environ.get(name):
            return value
    uid = os.getuid()
    if uid not in _USERS:
        try:
            _USERS[uid] = getpass.getuser()
        except (KeyError, OSError):  # a uid without a passwd entry (some containers)
            _USERS[uid] = str(uid)
    return _USERS[uid]


def build_env(
    *,
    home: Path,
    tmp: Path,
    shim_dir: Path,
    base_path: str,
    secrets: Mapping[str, str],
    extra_env: Mapping[str, str],
) -> dict[str, str]:
    """Compose the sandbox environment.

    ``extra_env`` is applied last and may override anything, except that the shim folder always stays
    first on ``PATH`` so no call escapes the log.
    """
    user = _user()
    env: dict[str, str] = {
        "PATH": f"{shim_dir}{os.pathsep}{base_path}" if base_path else str(shim_dir),
        "HOME": str(home),
        "USER": user,
        "LOGNAME": user,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": str(tmp),
        "SHELL": "/bin/bash",
    }
    env.update({name: str(home / rel) for name, rel in XDG_DIRS.items()})
    env.update(secrets)
    env.update(extra_env)
    if "PATH" in extra_env:
        env["PATH"] = f"{shim_dir}{os.pathsep}{extra_env['PATH']}"
    return env
