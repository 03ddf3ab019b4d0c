"""The auditing proxy on its own, between a real HTTP client and a loopback upstream that the test steers.

The upstream here is a small asyncio HTTP server written for the test, because the guarantees under
attack need control the fake model server does not give: an event held back until the client has
proved it received the one before (streaming, not buffering), exact bytes compressed and chunked, a
request that never gets an answer, a port nobody listens on.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fakes.model_server import ModelServer, say
from trialbook.agents._audit_proxy import AuditProxy
from trialbook.agents._audited import with_audit
from trialbook.evidence import AgentResult, DeclaredInput
from trialbook.masking import Masker

KEY = "sk-proxy-test-" + "e5" * 16

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]


@asynccontextmanager
async def upstream(handler: Handler) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A loopback server calling ``handler`` with each raw request head+body; yields its URL and the log."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            raw = head + (await reader.readexactly(length) if length else b"")
            seen.append(raw)
            await handler(reader, writer, raw)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        server.close()


def _port_closed(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection((parts.hostname, parts.port), 5).close()
    except ConnectionRefusedError:
        return True
    return False


MESSAGES = {"model": "claude-x", "system": "be brief", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.asyncio
async def test_events_pass_one_by_one_as_the_upstream_sends_them() -> None:
    received_first = asyncio.Event()

    async def stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
        writer.write(b"event: one\ndata: {}\n\n")
        await writer.drain()
        # The second event is sent only once the client holds the first: a buffering proxy deadlocks.
        await received_first.wait()
        writer.write(b"event: two\ndata: {}\n\n")
        await writer.drain()

    async with (
        upstream(stream) as (url, _),
        AuditProxy(url, Masker()) as proxy,
        httpx.AsyncClient() as client,
        client.stream("POST", proxy.url + "/v1/messages", json=MESSAGES) as response,
    ):
        chunks = response.aiter_raw()
        first = await asyncio.wait_for(anext(chunks), 60)
        received_first.set()
        rest = b"".join([chunk async for chunk in chunks])
    assert first == b"event: one\ndata: {}\n\n"
    assert rest == b"event: two\ndata: {}\n\n"
    assert len(proxy.findings.records) == 1


@pytest.mark.asyncio
async def test_request_and_response_bytes_pass_unchanged_compressed_and_all() -> None:
    payload = gzip.compress(b'{"id": "msg_1", "content": [{"type": "text", "text": "hello"}]}')

    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> None:
        writer.write(
            b"HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-encoding: gzip\r\n"
            b"request-id: req_upstream_7\r\nx-custom: kept\r\n"
            + f"content-length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        await writer.drain()

    body = json.dumps(MESSAGES).encode()
    headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01", "content-type": "application/json"}
    async with (
        upstream(reply) as (url, seen),
        AuditProxy(url, Masker()) as proxy,
        httpx.AsyncClient() as client,
    ):
        request = client.build_request(
            "POST", proxy.url + "/v1/messages?beta=true", content=body, headers=headers
        )
        response = await client.send(request, stream=True)
        raw = b"".join([chunk async for chunk in response.aiter_raw()])
        await response.aclose()
    assert response.status_code == 201
    assert response.headers["x-custom"] == "kept" and response.headers["content-encoding"] == "gzip"
    assert raw == payload  # still compressed, byte for byte
    (sent,) = seen
    head, _, forwarded = sent.partition(b"\r\n\r\n")
    assert forwarded == body  # the exact bytes the client sent
    assert head.startswith(b"POST /v1/messages?beta=true HTTP/1.1\r\n")
    assert f"x-api-key: {KEY}".encode() in head
    assert b"python-httpx" in head  # the client's own user agent, not one the proxy added
    (record,) = proxy.findings.records
    assert record.request_id == "req_upstream_7"
    assert record.model == "claude-x"


@pytest.mark.asyncio
async def test_credentials_are_forwarded_masked_and_never_recorded() -> None:
    masker = Masker()
    with ModelServer([say("hello")]) as fake:
        async with AuditProxy(fake.url, masker) as proxy, httpx.AsyncClient() as client:
            headers = {"x-api-key": KEY, "authorization": f"Bearer {KEY}-bearer"}
            response = await client.post(proxy.url + "/v1/messages", json=MESSAGES, headers=headers)
            assert response.status_code == 200
        (request,) = fake.requests
    assert request.headers["x-api-key"] == KEY
    assert request.headers["authorization"] == f"Bearer {KEY}-bearer"
    assert KEY in masker.values and f"{KEY}-bearer" in masker.values
    assert masker.text(f"leak {KEY}-bearer") == "leak ***"
    assert KEY not in repr(proxy.findings)


@pytest.mark.asyncio
async def test_an_unreadable_model_request_is_refused_and_never_forwarded() -> None:
    with ModelServer([say("hello")]) as fake:
        async with AuditProxy(fake.url, Masker()) as proxy, httpx.AsyncClient() as client:
            bad = await client.post(proxy.url + "/v1/messages", content=b"{not json")
            compressed = await client.post(
                proxy.url + "/v1/responses",
                content=gzip.compress(b"{}"),
                headers={"content-encoding": "gzip"},
            )
            other = await client.get(proxy.url + "/v1/models")  # not a model request: forwarded
        assert [r.path for r in fake.requests] == ["/v1/models"]
    assert bad.status_code == compressed.status_code == 400
    assert (
        proxy.findings.refused
        == "request audit refused a request to /v1/messages: the request body is not JSON"
    )
    assert "compressed" in compressed.json()["error"]["message"]
    assert other.status_code == 404  # the fake's own answer, passed through
    assert proxy.findings.records == []


@pytest.mark.asyncio
async def test_closing_the_proxy_cuts_a_hanging_exchange_and_frees_the_port() -> None:
    arrived = asyncio.Event()
    upstream_closed = asyncio.Event()

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> None:
        arrived.set()
        await reader.read()  # returns when the proxy hangs up on the upstream
        upstream_closed.set()

    async with upstream(hold) as (url, _):
        proxy = AuditProxy(url, Masker())
        await proxy.__aenter__()
        address = proxy.url
        async with httpx.AsyncClient(timeout=None) as client:
            pending = asyncio.ensure_future(client.post(address + "/v1/messages", json=MESSAGES))
            await asyncio.wait_for(arrived.wait(), 60)
            await proxy.aclose()
            with pytest.raises(httpx.HTTPError):
                await asyncio.wait_for(pending, 60)
        await asyncio.wait_for(upstream_closed.wait(), 60)
    assert _port_closed(address)
    assert len(proxy.findings.records) == 1  # audited before it was forwarded


@pytest.mark.asyncio
async def test_an_unreachable_upstream_is_a_capture_error_and_a_502(closed_port: int) -> None:
    port = closed_port
    async with AuditProxy(f"http://127.0.0.1:{port}", Masker([KEY])) as proxy, httpx.AsyncClient() as client:
        response = await client.post(proxy.url + "/v1/messages", json=MESSAGES, headers={"x-api-key": KEY})
    assert response.status_code == 502
    (error,) = proxy.findings.errors
    assert f"127.0.0.1:{port}" in error and KEY not in error


@pytest.mark.asyncio
async def test_an_upstream_that_is_not_http_is_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError, match="not an http"):
        AuditProxy("ftp://example.invalid", Masker())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    chunks=st.lists(st.binary(min_size=1, max_size=3000), min_size=1, max_size=8),
    status=st.sampled_from([200, 201, 400, 429, 500, 529]),
)
def test_any_response_body_arrives_byte_for_byte_however_it_is_cut(chunks: list[bytes], status: int) -> None:
    async def run() -> bytes:
        async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> None:
            writer.write(f"HTTP/1.1 {status} X\r\ntransfer-encoding: chunked\r\n\r\n".encode())
            for chunk in chunks:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
            writer.write(b"0\r\n\r\n")
            await writer.drain()

        async with (
            upstream(reply) as (url, _),
            AuditProxy(url, Masker()) as proxy,
            httpx.AsyncClient() as client,
        ):
            request = client.build_request("POST", proxy.url + "/v1/responses", json={"input": "hi"})
            response = await client.send(request, stream=True)
            assert response.status_code == status
            body = b"".join([part async for part in response.aiter_raw()])
            await response.aclose()
            return body

    assert asyncio.run(run()) == b"".join(chunks)


def _finished(success: bool = True) -> AgentResult:
    return AgentResult(
        agent_name="codex", agent_version=None, success=success, error=None, stop_reason="completed"
    )


@pytest.mark.asyncio
async def test_a_successful_run_that_sent_nothing_through_the_proxy_is_not_a_clean_audit() -> None:
    async with AuditProxy("http://127.0.0.1:9", Masker()) as proxy:
        pass
    result = with_audit(_finished(), proxy)
    assert result.request_audit == ()
    assert any("no model request went through the audit proxy" in e for e in result.capture_errors)
    assert not result.evidence_complete
    assert result.configuration is not None and result.configuration["audit_proxy"] == proxy.address


@pytest.mark.asyncio
async def test_a_refused_request_ends_the_trial_with_request_audit_error() -> None:
    with ModelServer([say("hello")]) as fake:
        async with AuditProxy(fake.url, Masker()) as proxy, httpx.AsyncClient() as client:
            await client.post(proxy.url + "/v1/messages", content=b"[")
    result = with_audit(_finished(), proxy)
    assert (result.success, result.stop_reason) == (False, "request_audit_error")
    assert result.error == "request audit refused a request to /v1/messages: the request body is not JSON"


@pytest.mark.asyncio
async def test_the_context_of_what_passes_decides_which_declared_inputs_loaded() -> None:
    sent = DeclaredInput.instruction_file("CLAUDE.md", "a" * 64, "Answer  in\none word.\n")
    unsent = DeclaredInput.instruction_file("AGENTS.md", "b" * 64, "Never deploy on Fridays.")
    read_only = DeclaredInput.instruction_file("docs/NOTES.md", "c" * 64, "Notes the agent only read.")
    body = {
        "model": "claude-x",
        "system": [{"type": "text", "text": "You are Claude. Answer in one word."}],
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "Notes the agent only read."}
                ],
            },
        ],
    }
    with ModelServer([say("hello")]) as fake:
        async with (
            AuditProxy(fake.url, Masker(), [sent, unsent, read_only]) as proxy,
            httpx.AsyncClient() as c,
        ):
            await c.post(proxy.url + "/v1/messages", json=body)
    assert proxy.findings.loads is not None
    rows = {row.path: row.loaded for row in proxy.findings.loads.result(audited=True)}
    # A file the agent read through a tool reached the model as tool output, not as instructions.
    assert rows == {"CLAUDE.md": True, "AGENTS.md": False, "docs/NOTES.md": False}
    result = with_audit(_finished(), proxy)
    assert {row.path: row.loaded for row in result.instructions_loaded} == rows


@pytest.mark.asyncio
@pytest.mark.parametrize("framing", ["chunked", "length"])
async def test_an_upstream_that_dies_mid_stream_is_a_cut_stream_and_a_capture_error(framing: str) -> None:
    answered: list[bytes] = []

    async def die_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> None:
        if answered:  # the retry gets a whole answer
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
            await writer.drain()
            return
        answered.append(raw)
        if framing == "chunked":
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
            writer.write(head + _chunk(b"event: one\ndata: {}\n\n"))
        else:
            head = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: 1000\r\n\r\n"
            writer.write(head + b"event: one\ndata: {}\n\n")
        await writer.drain()
        writer.transport.abort()  # the endpoint's process died: no last chunk, no more bytes

    async with (
        upstream(die_once) as (url, _),
        AuditProxy(url, Masker([KEY])) as proxy,
        httpx.AsyncClient() as client,
    ):
        headers = {"x-api-key": KEY}
        async with client.stream(
            "POST", proxy.url + "/v1/messages", json=MESSAGES, headers=headers
        ) as response:
            assert response.status_code == 200
            received = bytearray()
            # The client must see the stream break, never a clean end that looks like a whole answer.
            with pytest.raises(httpx.RemoteProtocolError):
                await _read_into(response, received)
        assert bytes(received) == b"event: one\ndata: {}\n\n"
        # The proxy is still there for the CLI's retry.
        again = await client.post(proxy.url + "/v1/messages", json=MESSAGES, headers=headers)
        assert (again.status_code, again.content) == (200, b"ok")
    (error,) = proxy.findings.errors
    assert "broke off in the audit proxy" in error and "POST /v1/messages" in error
    assert KEY not in error
    assert len(proxy.findings.records) == 2


@pytest.mark.asyncio
async def test_a_client_that_hangs_up_mid_stream_closes_the_upstream_exchange_and_nothing_breaks() -> None:
    upstream_gone = asyncio.Event()
    sent_first = asyncio.Event()

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, raw: bytes) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        try:
            while True:  # events until the other side hangs up
                writer.write(_chunk(b"event: tick\ndata: {}\n\n"))
                await writer.drain()
                sent_first.set()
                if await _closed_within(reader, 0.05):
                    break
        except ConnectionError:
            pass
        upstream_gone.set()

    async with upstream(endless) as (url, _), AuditProxy(url, Masker()) as proxy:
        reader, writer = await asyncio.open_connection(*urlsplit(proxy.url).netloc.split(":"))
        body = json.dumps(MESSAGES).encode()
        writer.write(
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            + f"content-length: {len(body)}\r\n\r\n".encode()
            + body
        )
        await writer.drain()
        await asyncio.wait_for(reader.readuntil(b"event: tick"), 60)
        writer.transport.abort()  # the CLI was killed mid-answer
        await asyncio.wait_for(upstream_gone.wait(), 60)
        # The next exchange works as before.
        async with (
            httpx.AsyncClient() as client,
            client.stream("POST", proxy.url + "/v1/messages", json=MESSAGES) as response,
        ):
            first = await asyncio.wait_for(anext(response.aiter_raw()), 60)
        assert first.startswith(b"event: tick")
        await asyncio.wait_for(upstream_gone.wait(), 60)
    assert proxy.findings.errors == []  # a client hanging up is not a failure of the proxy
    assert len(proxy.findings.records) == 2


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    """Whether the peer closed its side (EOF) within ``seconds``."""
    try:
        return await asyncio.wait_for(reader.read(1), seconds) == b""
    except TimeoutError:
        return False


def _chunk(data: bytes) -> bytes:
    """``data`` as one chunk of a chunked HTTP/1.1 body."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


async def _read_into(response: httpx.Response, received: bytearray) -> None:
    """Read the raw body into ``received`` as it arrives, up to its end or its break."""
    async for chunk in response.aiter_raw():
        received += chunk


@pytest.mark.asyncio
async def test_each_wire_format_is_recorded_as_copilot_records_it_images_and_all() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}
    anthropic = {
        "model": "claude-x",
        "system": [{"type": "text", "text": "S1"}, {"type": "text", "text": "S2"}],
        "messages": [{"role": "user", "content": [image, image, {"type": "text", "text": "what is it?"}]}],
        "tools": [{"name": "Bash", "input_schema": {}}, {"name": "Read", "input_schema": {}}],
    }
    responses = {
        "model": "gpt-x",
        "instructions": "TOP",
        "input": [
            {"role": "developer", "content": [{"type": "input_text", "text": "DEV"}]},
            {"role": "user", "content": [{"type": "input_image", "image_url": "data:", "detail": "high"}]},
        ],
        "reasoning": {"effort": "medium"},
        "tools": [{"type": "function", "name": "shell"}, {"type": "web_search"}],
    }
    with ModelServer([say("one"), say("two")]) as fake:
        async with AuditProxy(fake.url, Masker()) as proxy, httpx.AsyncClient() as client:
            await client.post(proxy.url + "/v1/messages", json=anthropic)
            await client.post(proxy.url + "/v1/responses", json=responses)
        assert [request.body for request in fake.requests] == [anthropic, responses]  # passed unchanged
    first, second = proxy.findings.records
    assert (first.model, first.tool_names, first.image_count, first.image_details) == (
        "claude-x",
        ("Bash", "Read"),
        2,
        (None, None),
    )
    assert first.instructions_sha256 == hashlib.sha256(b"S1\n\nS2").hexdigest()
    assert (second.model, second.tool_names, second.reasoning_effort) == ("gpt-x", ("shell",), "medium")
    assert (second.image_count, second.image_details) == (1, ("high",))
    assert second.instructions_sha256 == hashlib.sha256(b"TOP\n\nDEV").hexdigest()
