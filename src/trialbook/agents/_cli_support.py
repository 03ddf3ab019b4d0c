"""What the adapters that drive an agent CLI share: options, binaries, versions, environments, transcripts.

Claude Code and Codex are both npm binaries run once per trial with a JSON event stream on stdout; the
parsing differs, everything around it is here so both behave the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..evidence import JsonValue
from ..sandbox.process import run_process
from ._protocol import AgentSpec

__all__ = [
    "CliRun",
    "Options",
    "build_env",
    "find_binary",
    "mask",
    "probe_version",
    "run_cli",
    "secret_values",
    "sweep",
    "write_atomic",
]

RUN_MARKER = "TRIALBOOK_AGENT_RUN"
"""Set to a fresh value in every agent run's environment, so the run's stray processes can be found."""


class Options:
    """Reads an agent entry's options, turning every mistake into a ``ConfigError`` that names the fix."""

    def __init__(self, spec: AgentSpec, known: Iterable[str]) -> None:
        self._spec = spec
        unknown = sorted(set(spec.options) - set(known))
        if unknown:
            self._fail(unknown[0], f"unknown option; {spec.name} accepts {', '.join(sorted(known))}")

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
    with tempfile.TemporaryDirectory(prefix="trialbook-probe-") as home:
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

    Only the documented ``passthrough`` names come from the runner's own environment. Option values
    still holding an unrendered ``{{ ... }}`` template are skipped: the runner renders them into
    ``task_env``, which wins over the raw options. ``defaults`` fill only what nobody set; ``fixed``
    (isolation and telemetry switches) always win.
    """
    env = {name: os.environ[name] for name in passthrough if name in os.environ}
    env.update({k: v for k, v in option_env.items() if "{{" not in v})
    env.update(task_env)
    for name, value in defaults.items():
        env.setdefault(name, value)
    env.update(fixed)
    return env


_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)


def secret_values(env: Mapping[str, str]) -> tuple[str, ...]:
    """Values of variables whose names mark them as secrets, longest first so masking is greedy."""
    found = {v for k, v in env.items() if _SECRET_NAME.search(k) and len(v) >= 4}
    return tuple(sorted(found, key=len, reverse=True))


def mask(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret value in ``text`` with ``***``."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder, so a crash never leaves half a transcript."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def sweep(marker: str) -> int:
    """Kill every process whose environment carries ``RUN_MARKER=marker``; returns how many.

    Killing the CLI's process group is not enough: Claude Code starts its shell tool in a new session,
    so a command the agent left running in the background escapes the group. The environment is
    inherited across ``setsid``, so the marker still finds it (on Linux, through ``/proc``).
    """
    needle = f"\0{RUN_MARKER}={marker}\0".encode()
    killed = 0
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue  # gone already, or not ours to read
        if needle in b"\0" + environ:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


@dataclass(frozen=True)
class CliRun:
    """How one CLI run ended. ``aborted`` says why trialbook stopped it early (a hopeless retry loop)."""

    lines: tuple[str, ...]
    stderr: str
    returncode: int | None
    timed_out: bool
    aborted: str | None
    duration_ms: float


async def run_cli(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float | None,
    watch: Callable[[str], str | None],
) -> CliRun:
    """Run the CLI in its own process group; ``watch`` sees each stdout line and may return a reason to stop.

    Stopping early matters for failures the CLIs retry for minutes (a rejected key, an unreachable
    endpoint): the trial fails in seconds with the reason instead of waiting for its timeout.
    """
    lines: list[str] = []
    reasons: list[str] = []
    stop = asyncio.Event()

    def on_line(raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\n")
        lines.append(line)
        if not reasons and (reason := watch(line)) is not None:
            reasons.append(reason)
            stop.set()

    marker = uuid.uuid4().hex
    env = {**env, RUN_MARKER: marker}
    started = time.monotonic()
    process = asyncio.ensure_future(
        run_process(argv, cwd=cwd, env=env, timeout_s=timeout_s, on_stdout_line=on_line)
    )
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({process, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
        if not process.done():
            process.cancel()  # run_process kills the whole group before re-raising
        await asyncio.gather(process, return_exceptions=True)
        sweep(marker)
    duration_ms = (time.monotonic() - started) * 1000
    if process.cancelled():
        return CliRun(tuple(lines), "", None, False, reasons[0] if reasons else None, duration_ms)
    outcome = process.result()
    return CliRun(
        lines=tuple(lines),
        stderr=outcome.stderr.decode("utf-8", "replace"),
        returncode=outcome.returncode,
        timed_out=outcome.timed_out,
        aborted=None,
        duration_ms=outcome.duration_ms,
    )
