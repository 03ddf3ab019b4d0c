"""The Copilot CLI process: where it is, what environment it gets, and sharing it across trials.

The CLI's shell tool runs every command with the environment of the CLI process itself (the SDK has no
per-session environment), so a trial's PATH (its shims first) and HOME only reach commands if the CLI
process was started with them. A server is therefore shared by every trial whose environment is identical
and never by two trials whose environments differ; sessions stay separate either way.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copilot import CopilotClient, RuntimeConnection

from ...sandbox.process import run_process
from .._copilot_names import TOKEN_VARIABLES
from .._protocol import Availability
from ._exit import cli_process, has_exited
from ._forward import AuditingRequestHandler
from ._native import native_cli

__all__ = [
    "PASSTHROUGH",
    "RUNNER_TOKEN",
    "TOKEN_VARIABLES",
    "ServerPool",
    "availability",
    "cli_environment",
    "cli_version",
    "default_pkg_cache",
]

RUNNER_TOKEN = "COPILOT_GITHUB_TOKEN"
PASSTHROUGH = (RUNNER_TOKEN, "COPILOT_CLI_PATH")
"""The only variables of the runner's own environment that reach the CLI.

``GH_TOKEN`` and ``GITHUB_TOKEN`` are often a workflow's own write token (``GH_TOKEN: ${{ github.token }}``
at job level), which an agent must never hold; an eval that really means them declares them in the
agent's ``env:``. Empty values count as unset.
"""

_STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
_VERSION = re.compile(r"\d+\.\d+\.\d+")
_versions: dict[tuple[str, int, float], str | None] = {}


def default_pkg_cache(environ: Mapping[str, str]) -> str:
    """Where the CLI unpacks its ~230 MB runtime: shared by all trials so an isolated HOME stays cheap."""
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return str(Path(base) / "trialbook" / "copilot")


def _complete_path(path: str) -> str:
    # The CLI puts standard directories it finds missing *in front of* PATH, which would hide the trial's
    # shims behind /usr/local/bin. Appending them here keeps the shim directory first.
    parts = [p for p in path.split(os.pathsep) if p]
    return os.pathsep.join(parts + [d for d in _STANDARD_PATH if d not in parts])


def cli_environment(
    task_env: Mapping[str, str], home: Path, cli_path: str, environ: Mapping[str, str]
) -> dict[str, str]:
    """The CLI's environment: the trial's env, the documented pass-through variables, fixed settings."""
    env = dict(task_env)
    if environ.get(RUNNER_TOKEN) and not env.get(RUNNER_TOKEN):
        env[RUNNER_TOKEN] = environ[RUNNER_TOKEN]
    env["COPILOT_CLI_PATH"] = cli_path
    env["COPILOT_SKIP_CLI_DOWNLOAD"] = "1"
    env["COPILOT_AUTO_UPDATE"] = "false"
    env.setdefault("HOME", str(home))
    env.setdefault("COPILOT_HOME", str(Path(env["HOME"]) / ".copilot"))
    env.setdefault("COPILOT_PKG_CACHE_HOME", default_pkg_cache(environ))
    env["PATH"] = _complete_path(env.get("PATH", ""))
    return env


def availability(
    cli_path: str | None,
    has_provider: bool,
    environ: Mapping[str, str],
    declared: Mapping[str, str] = {},
) -> Availability:
    """Say precisely what is missing: the CLI path, an executable CLI, or any way to reach a model.

    ``declared`` is the agent entry's own ``env:``; a token there counts even as an unrendered template.
    """
    if not cli_path:
        return Availability(
            False, "no Copilot CLI: set COPILOT_CLI_PATH or the cli_path option (npm install @github/copilot)"
        )
    if not Path(cli_path).is_file():
        return Availability(False, f"the Copilot CLI path {cli_path} does not exist")
    if not os.access(cli_path, os.X_OK):
        return Availability(False, f"the Copilot CLI at {cli_path} is not executable (chmod +x it)")
    has_token = bool(environ.get(RUNNER_TOKEN)) or any(declared.get(name) for name in TOKEN_VARIABLES)
    if not has_provider and not has_token:
        return Availability(
            False,
            "no credentials: set COPILOT_GITHUB_TOKEN (GH_TOKEN and GITHUB_TOKEN are not read from the "
            "environment; declare them in the agent's env: if you mean them), or configure a provider",
        )
    return Availability(True)


async def _probe(cli_path: str) -> str | None:
    env = {"PATH": _complete_path(os.environ.get("PATH", "")), "COPILOT_AUTO_UPDATE": "false"}
    env["HOME"] = os.environ.get("HOME", str(Path.home()))
    env["COPILOT_PKG_CACHE_HOME"] = default_pkg_cache(os.environ)
    outcome = await run_process(
        [native_cli(cli_path), "--no-auto-update", "--version"], cwd=Path.cwd(), env=env, timeout_s=60
    )
    match = _VERSION.search(outcome.stdout.decode("utf-8", "replace"))
    return match.group(0) if outcome.returncode == 0 and match else None


def cli_version(cli_path: str) -> str | None:
    """``copilot --version``, memoised on the binary's (realpath, size, mtime) so upgrades are noticed."""
    real = os.path.realpath(cli_path)
    try:
        stat = os.stat(real)
    except OSError:
        return None
    key = (real, stat.st_size, stat.st_mtime)
    if key not in _versions:
        # version() is synchronous but may be called from inside the runner's event loop.
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            _versions[key] = pool.submit(asyncio.run, _probe(cli_path)).result()
    return _versions[key]


@dataclass
class _Server:
    client: Any
    handler: AuditingRequestHandler | None
    users: int = 0
    ready: asyncio.Lock = field(default_factory=asyncio.Lock)
    started: bool = False


class ServerPool:
    """CLI servers keyed by (binary, environment, audit); idle ones beyond ``max_idle`` are stopped."""

    def __init__(self, max_idle: int = 1) -> None:
        self.max_idle = max_idle
        self._servers: dict[tuple[object, ...], _Server] = {}
        self.started = 0
        self.stop_errors: list[str] = []

    @staticmethod
    def key(cli_path: str, env: Mapping[str, str], audit: bool) -> tuple[object, ...]:
        """Trials may share a server only when all of these are equal."""
        return (cli_path, tuple(sorted(env.items())), audit)

    async def acquire(self, cli_path: str, env: Mapping[str, str], audit: bool, cwd: Path) -> _Server:
        """A started server for this environment, reused when one is already running."""
        key = self.key(cli_path, env, audit)
        server = self._servers.get(key)
        if server is not None and server.users == 0 and _exited(server):
            # It died while idle (killed, out of memory): a fresh CLI serves this trial instead.
            self._servers.pop(key, None)
            await self._stop(server)
            server = None
        if server is None:
            # The CLI itself, not npm's loader in front of it: the process watched and stopped is the CLI.
            connection = RuntimeConnection.for_stdio(path=native_cli(cli_path))
            connection.env = dict(env)
            token = next((env[name] for name in TOKEN_VARIABLES if env.get(name)), None)
            handler = AuditingRequestHandler() if audit else None
            client = CopilotClient(
                connection=connection,
                use_logged_in_user=False,
                github_token=token,
                request_handler=handler,
                working_directory=str(cwd),
            )
            server = self._servers[key] = _Server(client, handler)
        server.users += 1
        async with server.ready:
            if not server.started:
                try:
                    await server.client.start()
                except BaseException:
                    server.users -= 1
                    self._servers.pop(key, None)
                    raise
                server.started = True
                self.started += 1
        return server

    async def release(self, server: _Server) -> None:
        """Give a server back; stop the oldest idle servers past ``max_idle``."""
        server.users -= 1
        if server.users == 0 and _exited(server):
            # A CLI that died under a trial is never handed to the next one.
            self._servers = {k: s for k, s in self._servers.items() if s is not server}
            await self._stop(server)
        idle = [(k, s) for k, s in self._servers.items() if s.users == 0]
        for key, stale in idle[: max(0, len(idle) - self.max_idle)]:
            self._servers.pop(key, None)
            await self._stop(stale)

    async def _stop(self, server: _Server) -> None:
        process = getattr(server.client, "_cli_process", None)
        try:
            await server.client.stop()
        except BaseException as exc:  # ExceptionGroup[StopError] from the SDK
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            self.stop_errors.append(f"stopping the Copilot CLI failed: {exc!r}")
        # The SDK leaves the CLI's pipes open after stopping it; close them so nothing leaks.
        for stream in (getattr(process, name, None) for name in ("stdin", "stdout", "stderr")):
            if stream is not None and not stream.closed:
                stream.close()

    async def stop_for(self, cli_path: str) -> None:
        """Stop the idle servers of ``cli_path`` now (an isolated trial's, whose namespaces end with it)."""
        for key, server in list(self._servers.items()):
            if key[0] == cli_path and server.users == 0:
                self._servers.pop(key, None)
                await self._stop(server)

    async def aclose(self) -> None:
        """Stop every server, even when one of them fails to stop."""
        servers, self._servers = list(self._servers.values()), {}
        for server in servers:
            await self._stop(server)


def _exited(server: _Server) -> bool:
    process = cli_process(server.client)
    return server.started and process is not None and has_exited(process)
