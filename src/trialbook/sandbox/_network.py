"""A trial's own network under bubblewrap: ``none`` (loopback only) or ``model`` (only its model endpoints).

Both give the trial its own network namespace, with nothing of the host's reachable. Inside it
(``_inside``), every address is made local, so a connection anywhere is refused at once, and each
refusal is noted in ``outside/network.jsonl``: the evidence's ``network_refused``.

With ``model`` the agent's model endpoints (the URLs its adapter points it at: the model server, or the
audit proxy in front of it) stay reachable by the same address and port: inside, a listener takes each
connection there and hands it through a Unix socket in the trial folder to :class:`ModelRelay`, which
runs on the host for the length of the agent's run and carries the bytes to the endpoint unchanged
(TLS stays end to end). An endpoint named by a host name is given a loopback address of its own in an
``/etc/hosts`` made for the trial, since no name server is reachable.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import json
import shutil
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from ..evidence import RefusedConnection
from ._outside import OUTSIDE

__all__ = ["Endpoint", "ModelRelay", "endpoint_of", "network_spec", "refused_connections", "relay_for"]

REFUSED_AT_MOST = 100
_SOCKET_PATH_MAX = 107
"""The longest path a Unix socket can be bound at (``sun_path`` holds 108 bytes with its NUL)."""


@dataclass(frozen=True)
class Endpoint:
    """A model endpoint's host and port, as the agent connects to it."""

    host: str
    port: int

    @property
    def named(self) -> bool:
        """Whether ``host`` is a name (given an address of its own inside) rather than an address."""
        try:
            ipaddress.ip_address(self.host)
        except ValueError:
            return True
        return False


def endpoint_of(url: str) -> Endpoint:
    """The host and port of an http(s) URL (80 and 443 by default).

    Raises:
        ValueError: not an http(s) URL with a host.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"the model endpoint {url!r} is not an http(s) URL")
    return Endpoint(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))


def _net_folder(root: Path) -> Path:
    return root / OUTSIDE / "net"


def _log(root: Path) -> Path:
    return root / OUTSIDE / "network.jsonl"


def _socket(root: Path, index: int) -> Path:
    return _net_folder(root) / f"{index}.sock"


def network_spec(root: Path, endpoints: Sequence[Endpoint]) -> tuple[list[str], list[tuple[Path, Path]]]:
    """``_inside``'s settings for the trial's network, and the files to bind (an ``/etc/hosts`` for names)."""
    folder = _net_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    settings = ["log", str(_log(root))]
    ip = shutil.which("ip", path="/usr/sbin:/sbin:/usr/bin:/bin")
    if ip is not None:
        settings += ["ip", ip]
    names: list[str] = []
    for index, endpoint in enumerate(endpoints):
        address = endpoint.host
        if endpoint.named:
            address = f"127.0.0.{10 + index}"
            names.append(f"{address} {endpoint.host}")
        settings += ["listen", address, str(endpoint.port), str(_socket(root, index))]
    binds: list[tuple[Path, Path]] = []
    if names:
        hosts = folder / "hosts"
        hosts.write_text("127.0.0.1 localhost\n::1 localhost\n" + "\n".join(names) + "\n", encoding="utf-8")
        binds.append((hosts, Path("/etc/hosts")))
    return settings, binds


def refused_connections(root: Path) -> tuple[RefusedConnection, ...] | None:
    """The connections refused inside the trial, in order; ``None`` when nothing watched its network."""
    try:
        text = _log(root).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None if not (root / OUTSIDE / "net").is_dir() else ()
    found: dict[tuple[str, int], None] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
            host, port = record["host"], record["port"]
        except (ValueError, KeyError, TypeError):
            continue  # the trial can write this file too; a line it spoiled is not a refusal
        if isinstance(host, str) and isinstance(port, int) and not isinstance(port, bool):
            found[(host, port)] = None
    return tuple(RefusedConnection(host, port) for host, port in list(found)[:REFUSED_AT_MOST])


class ModelRelay:
    """On the host, for one agent run: each trial-side Unix socket carried on to its model endpoint."""

    def __init__(self, root: Path, endpoints: Sequence[Endpoint]) -> None:
        self._root = root
        self._endpoints = tuple(endpoints)
        self._servers: list[asyncio.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> ModelRelay:
        _net_folder(self._root).mkdir(parents=True, exist_ok=True)
        for index, endpoint in enumerate(self._endpoints):
            path = _socket(self._root, index)
            if len(str(path).encode()) > _SOCKET_PATH_MAX:
                raise OSError(f"the trial folder's path is too long for a Unix socket: {path}")
            path.unlink(missing_ok=True)
            server = await asyncio.start_unix_server(
                functools.partial(self._serve, endpoint=endpoint), path=str(path)
            )
            self._servers.append(server)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, endpoint: Endpoint
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection(endpoint.host, endpoint.port)
        except OSError:
            writer.close()
            self._tasks.discard(task)
            return
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:
            pass  # the run ended: the connections close with it
        finally:
            for end in (writer, up_writer):
                end.close()
            self._tasks.discard(task)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


@contextlib.asynccontextmanager
async def relay_for(root: Path, urls: Sequence[str]) -> AsyncIterator[ModelRelay]:
    """A running :class:`ModelRelay` from the trial folder ``root`` to each of ``urls``' endpoints."""
    async with ModelRelay(root, [endpoint_of(url) for url in urls]) as relay:
        yield relay
