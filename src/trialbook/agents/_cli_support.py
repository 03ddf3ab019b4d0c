"""What the adapters that drive an agent CLI share: options, binaries, versions, environments, masking.

Claude Code and Codex are both npm binaries run once per trial with a JSON event stream on stdout; the
parsing differs, everything around it is here so both behave the same way.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from .._util.owner import temp_prefix
from ..errors import ConfigError
from ..evidence import JsonValue
from ..masking import SHORT_SECRET, Masker, credential_items
from ._protocol import AgentSpec

__all__ = [
    "Options",
    "build_env",
    "find_binary",
    "masker_for",
    "probe_version",
    "secret_values",
]


class Options:
    """Reads an agent entry's options, turning every mistake into a ``ConfigError`` that names the fix."""

    def __init__(self, spec: AgentSpec, known: Iterable[str]) -> None:
        self._spec = spec
        unknown = sorted(set(spec.options) - set(known))
        if unknown:
            self._fail(unknown[0], f"unknown option; {spec.name} accepts {', '.join(sorted(known))}")

    def fail(self, key: str, problem: str) -> None:
        """Refuse ``key`` with ``problem`` (a ``ConfigError`` naming the eval file and the agent)."""
        self._fail(key, problem)

    def _fail(self, key: str, problem: str) -> None:
        raise ConfigError(f"{self._spec.source}: agent {self._spec.name!r}: {key}: {problem}")

    def string(self, key: str) -> str | None:
        """A non-empty string option, or ``None`` when absent."""
        value = self._spec.options.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self._fail(key, f"expected a non-empty string, got {value!r}")
        assert isinstance(value, str)
        return value

    def flag(self, key: str) -> bool:
        """A ``true``/``false`` option, ``False`` when absent (``"true"`` as a string is refused)."""
        value = self._spec.options.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            self._fail(key, f"expected true or false, got {value!r}")
        return bool(value)

    def positive_int(self, key: str) -> int | None:
        """A positive integer option (booleans refused), or ``None`` when absent."""
        value = self._spec.options.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            self._fail(key, f"expected a whole number of at least 1, got {value!r}")
        assert isinstance(value, int)
        return value

    def strings(self, key: str) -> tuple[str, ...]:
        """A list of strings, e.g. extra command-line arguments."""
        value: JsonValue = self._spec.options.get(key)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._fail(key, f"expected a list of strings such as ['--flag', 'value'], got {value!r}")
        assert isinstance(value, list)
        return tuple(str(v) for v in value)

    def env(self) -> dict[str, str]:
        """The ``env`` mapping of variable names to string values."""
        value = self._spec.options.get("env")
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            self._fail("env", f"expected a mapping of variable names to strings, got {value!r}")
        assert isinstance(value, dict)
        return {k: str(v) for k, v in value.items()}


def find_binary(option: str | None, name: str, package: str) -> tuple[Path | None, str | None]:
    """Locate the CLI: the ``binary`` option, else ``name`` on the runner's PATH.

    Returns the absolute path, or ``None`` and a reason naming the npm package to install.
    """
    if option is not None:
        found = shutil.which(option)
        if found is None:
            return (
                None,
                f"binary {option!r} does not exist or is not executable; fix the agent's binary option",
            )
        return Path(found).absolute(), None
    found = shutil.which(name)
    if found is None:
        return None, (
            f"the {name!r} binary was not found on PATH; install it with `npm install -g {package}` "
            "or point the agent's binary option at it"
        )
    return Path(found).absolute(), None


_versions: dict[tuple[str, int, int], str | None] = {}
_versions_lock = threading.Lock()


def probe_version(binary: Path, args: Sequence[str], pattern: str, env: Mapping[str, str]) -> str | None:
    """Run ``binary args`` once per (realpath, size, mtime) and return the first group of ``pattern``.

    Keyed on the file itself so that an in-place upgrade is noticed without probing before every trial.
    """
    real = binary.resolve()
    try:
        stat = real.stat()
    except OSError:
        return None
    key = (str(real), stat.st_size, stat.st_mtime_ns)
    with _versions_lock:
        if key in _versions:
            return _versions[key]
    version: str | None = None
    with tempfile.TemporaryDirectory(prefix=temp_prefix("probe-")) as home:
        probe_env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, **env}
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            done = subprocess.run(
                [str(binary), *args], capture_output=True, text=True, timeout=30, env=probe_env, check=False
            )
            match = re.search(pattern, done.stdout, re.MULTILINE)
            version = match.group(1) if match else None
    with _versions_lock:
        _versions[key] = version
    return version


def build_env(
    *,
    passthrough: Iterable[str],
    option_env: Mapping[str, str],
    task_env: Mapping[str, str],
    fixed: Mapping[str, str],
    defaults: Mapping[str, str] = {},
) -> dict[str, str]:
    """The agent process's environment, lowest precedence first.

    Only the documented ``passthrough`` names come from the runner's own environment, and only when
    they are not empty (an empty ``CODEX_API_KEY`` is a missing one, not a credential). Option values
    still holding an unrendered ``{{ ... }}`` template are skipped: the runner renders them into
    ``task_env``, which wins over the raw options. ``defaults`` fill only what nobody set; ``fixed``
    (isolation and telemetry switches) always win.
    """
    env = {name: os.environ[name] for name in passthrough if os.environ.get(name)}
    env.update({k: v for k, v in option_env.items() if "{{" not in v})
    env.update(task_env)
    for name, value in defaults.items():
        env.setdefault(name, value)
    env.update(fixed)
    return env


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of variables whose names mark them as credentials, longest first so masking is greedy.

    The names are judged by the one rule of :mod:`trialbook.masking` (``OPENAI_API_KEY``, not
    ``GIT_AUTHOR_NAME``), as the run's and a Copilot session's maskers judge them.
    """
    found = {value for _, value in credential_items(dict(env)) if len(value) >= SHORT_SECRET}
    return tuple(sorted(found, key=len, reverse=True))


def masker_for(env: Mapping[str, str], base: Masker | None = None) -> Masker:
    """``base`` (the run's masker) plus the secret-looking values of an agent's environment."""
    return (base or Masker()).extended(secret_values(env))
