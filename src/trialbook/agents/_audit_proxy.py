"""The auditing loopback proxy: one per trial, between an agent CLI and its model endpoint.

Claude Code and Codex talk to their model API directly, so unlike Copilot there is no request handler to
sit in. With ``audit_requests: true`` the adapter starts this proxy on 127.0.0.1 (an ephemeral port),
points the CLI's base URL at it, and the proxy forwards every request unchanged to the endpoint the CLI
would otherwise have used, streaming each response back chunk by chunk as it arrives. On the way it
reads each model request body into the same ``RequestAudit`` record Copilot gets, and checks its
context for the trial's declared instruction files and skills (which reached the model) without keeping
the text. Credentials pass through in the headers and are never recorded; their values join the run's
masker the moment they are seen. A model request whose body the audit cannot read is refused (HTTP 400,
never forwarded): an audit that silently skipped a request would be worse than none.

The server side is h11 (a sans-I/O HTTP/1.1 parser) on asyncio streams, the upstream side httpx; both
come with the Copilot SDK's dependencies already and keep the proxy free of hand-written HTTP framing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import h11
import httpx

from ..evidence import DeclaredInput, LoadTracker, RequestAudit, request_context
from ..masking import Masker
from ._request_audit import UnsupportedRequestError, audit_body

__all__ = ["AuditProxy", "ProxyFindings"]

MODEL_PATHS = ("/messages", "/responses", "/chat/completions")
"""Endpoints whose POST bodies are model requests, audited before they leave the machine."""
_REFRAMED = frozenset({"transfer-encoding"})
"""Headers of the message framing, which each side's HTTP library writes anew (chunked in, length out).
Every other header passes as it came, in its order; ``Host`` is rewritten to the upstream's."""
_CREDENTIAL_HEADERS = ("x-api-key", "authorization", "api-key", "openai-api-key", "proxy-authorization")
_REQUEST_ID_HEADERS = ("request-id", "x-request-id")
_CHUNK = 65536


@dataclass
class ProxyFindings:
    """What one trial's proxy saw: audit records in request order, what loaded, and what went wrong."""

    records: list[RequestAudit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """Failures of the proxy or of forwarding: capture errors of the trial (masked)."""
    refused: str | None = None
    """Why the first unreadable model request was refused; the trial stops with ``request_audit_error``."""
    loads: LoadTracker | None = None
    """Which declared instruction files and skills the requests' context held (set when some are declared)."""


class AuditProxy:
    """A loopback HTTP/1.1 proxy to ``upstream`` for one trial; use ``async with`` so it stops with it."""

    def __init__(self, upstream: str, masker: Masker, inputs: Sequence[DeclaredInput] = ()) -> None:
        parts = urlsplit(upstream)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the model endpoint {upstream!r} is not an http(s) URL")
        self.upstream = upstream.rstrip("/")
        self.findings = ProxyFindings(loads=LoadTracker(inputs) if inputs else None)
        self._masker = masker
        self._server: asyncio.Server | None = None
        self._client: httpx.AsyncClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.address: str | None = None
        """``http://127.0.0.1:PORT`` once started; kept after the proxy stops, for the evidence."""

    @property
    def url(self) -> str:
        """The base URL the CLI is pointed at (no path: the CLI appends its own)."""
        if self._server is None or self.address is None:
            raise RuntimeError("the audit proxy is not running")
        return self.address

    @property
    def masked_upstream(self) -> str:
        """The upstream URL as evidence may show it (a credential in it is masked)."""
        return self._masker.text(self.upstream)

    async def __aenter__(self) -> AuditProxy:
        # No environment proxies, no redirects followed: the CLI's own request goes out as it was made.
        timeout = httpx.Timeout(None, connect=30.0)
        self._client = httpx.AsyncClient(timeout=timeout, trust_env=False, follow_redirects=False)
        for name in list(self._client.headers):  # httpx's own defaults (User-Agent, Accept...) would be added
            del self._client.headers[name]
        try:
            self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        except BaseException:
            await self._client.aclose()
            raise
        host, port = self._server.sockets[0].getsockname()[:2]
        self.address = f"http://{host}:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop listening, cut every open exchange, close the upstream connections."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()
        if self._client is not None:
            await self._client.aclose()

    # -- one client connection ----------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                event = await _next(conn, reader)
                if not isinstance(event, h11.Request):
                    break
                body = bytearray()
                while isinstance(part := await _next(conn, reader), h11.Data):
                    body += part.data
                await self._exchange(conn, writer, event, bytes(body))
                if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                    break
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.IncompleteReadError):
            pass  # the CLI hung up or spoke no HTTP: nothing more to serve on this connection
        except asyncio.CancelledError:
            # Only ``aclose`` cancels these tasks; asyncio's stream callback would report the
            # cancellation as an unhandled error, so the task ends normally instead.
            pass
        except Exception as exc:  # a proxy bug must show in the evidence, not vanish with the connection
            self._error(f"the audit proxy failed: {type(exc).__name__}: {exc}")
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._tasks.discard(task)

    async def _exchange(
        self, conn: h11.Connection, writer: asyncio.StreamWriter, request: h11.Request, body: bytes
    ) -> None:
        method, target = request.method.decode("ascii"), request.target.decode("ascii")
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers]
        self._learn_credentials(headers)
        upgrade = any(k.lower() == "upgrade" for k, _ in headers)
        url = self.upstream + (target if target.startswith("/") else "/" + target)
        path = urlsplit(url).path
        index: int | None = None
        if method == "POST" and path.rstrip("/").endswith(MODEL_PATHS):
            try:
                index = self._audit(headers, body, path)
            except UnsupportedRequestError as exc:
                reason = f"request audit refused a request to {path}: {exc}"
                self.findings.refused = self.findings.refused or self._masker.text(reason)
                await _reply_json(
                    conn, writer, 400, {"error": {"type": "invalid_request_error", "message": reason}}
                )
                return
        host = urlsplit(url).netloc
        forwarded = [
            (k, host if k.lower() == "host" else v) for k, v in headers if k.lower() not in _REFRAMED
        ]
        if body and not any(k.lower() == "content-length" for k, _ in forwarded):
            forwarded.append(("content-length", str(len(body))))  # it came chunked
        assert self._client is not None
        upstream_request = self._client.build_request(method, url, headers=forwarded, content=body or None)
        try:
            response = await self._client.send(upstream_request, stream=True)
        except httpx.HTTPError as exc:
            message = f"the audit proxy could not reach the model endpoint {self.upstream}: {exc!r}"
            self._error(message)
            await _reply_json(
                conn, writer, 502, {"error": {"type": "api_error", "message": self._masker.text(message)}}
            )
            return
        try:
            if index is not None:
                self._name_request(index, response.headers)
            if upgrade and response.status_code == 101:
                # A WebSocket the upstream accepted: the proxy carries no WebSocket traffic, so the CLI is
                # told to use HTTPS streaming instead (Codex falls back on 426), which is audited.
                await _reply_json(
                    conn,
                    writer,
                    426,
                    {"error": {"message": "the trialbook audit proxy serves no WebSockets"}},
                )
                return
            out = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _REFRAMED]
            conn_event = h11.Response(
                status_code=response.status_code, headers=out, reason=response.reason_phrase
            )
            await _send(conn, writer, conn_event)
            try:
                # No chunk_size: httpx would hold bytes back until that many arrived.
                async for chunk in response.aiter_raw():
                    await _send(conn, writer, h11.Data(data=chunk))
            except httpx.HTTPError as exc:
                self._error(
                    f"the model endpoint's response to {method} {path} broke off in the audit proxy: {exc!r}"
                )
                raise ConnectionAbortedError from exc  # the CLI sees a cut stream, as it would directly
            await _send(conn, writer, h11.EndOfMessage())
        finally:
            await response.aclose()

    # -- auditing -----------------------------------------------------------------------------------

    def _audit(self, headers: list[tuple[str, str]], body: bytes, path: str) -> int:
        encoding = next((v for k, v in headers if k.lower() == "content-encoding"), "identity")
        if encoding.strip().lower() not in ("", "identity"):
            raise UnsupportedRequestError(f"the body is compressed ({encoding})")
        try:
            parsed = json.loads(body)
        except ValueError as exc:
            raise UnsupportedRequestError("the request body is not JSON") from exc
        record = audit_body(parsed, None, path=path)
        if self.findings.loads is not None:
            self.findings.loads.see(request_context(parsed))
        self.findings.records.append(record)
        return len(self.findings.records) - 1

    def _name_request(self, index: int, headers: httpx.Headers) -> None:
        """Give a record the endpoint's own request id, the one its logs and support know it by."""
        found = next((headers[name] for name in _REQUEST_ID_HEADERS if name in headers), None)
        if found is not None:
            old = self.findings.records[index]
            self.findings.records[index] = RequestAudit(
                request_id=self._masker.text(found),
                model=old.model,
                tool_names=old.tool_names,
                reasoning_effort=old.reasoning_effort,
                image_details=old.image_details,
                image_count=old.image_count,
                instructions_sha256=old.instructions_sha256,
            )

    def _learn_credentials(self, headers: list[tuple[str, str]]) -> None:
        values = []
        for name, value in headers:
            if name.lower() in _CREDENTIAL_HEADERS:
                scheme, _, token = value.partition(" ")
                values += [value, token] if token and scheme.lower() in ("bearer", "basic") else [value]
        self._masker.add(v.strip() for v in values if v.strip())

    def _error(self, message: str) -> None:
        text = self._masker.text(message)
        if text not in self.findings.errors:
            self.findings.errors.append(text)


async def _next(conn: h11.Connection, reader: asyncio.StreamReader) -> object:
    """The next h11 event, reading from the socket as it needs."""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            conn.receive_data(await reader.read(_CHUNK))
            continue
        return event


async def _send(conn: h11.Connection, writer: asyncio.StreamWriter, event: h11.Event) -> None:
    data = conn.send(event)
    if data:
        writer.write(data)
        await writer.drain()  # each chunk leaves before the next is read: streaming, not buffering


async def _reply_json(
    conn: h11.Connection, writer: asyncio.StreamWriter, status: int, payload: object
) -> None:
    data = json.dumps(payload).encode()
    headers = [("content-type", "application/json"), ("content-length", str(len(data)))]
    await _send(conn, writer, h11.Response(status_code=status, headers=headers))
    await _send(conn, writer, h11.Data(data=data))
    await _send(conn, writer, h11.EndOfMessage())
