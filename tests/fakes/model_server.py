"""A loopback fake model API that real agent CLIs can talk to: Anthropic Messages and OpenAI Responses.

Both protocols stream their replies as server-sent events, as the real APIs do. The reply to a request
is picked by the conversation's position, not by arrival order: the ``n``-th model reply of any
conversation is ``script[n]``. That keeps the fake deterministic when several agents and trials share
one server concurrently. Usage::

    with ModelServer([shell("echo hi > out.txt"), say("done")]) as server:
        env = {"ANTHROPIC_BASE_URL": server.url}  # Claude Code
        options = {"base_url": server.openai_url}  # Codex
        ...
        server.requests  # every request received, in order
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ModelServer", "RecordedRequest", "Reply", "hang", "say", "shell"]


@dataclass(frozen=True)
class Reply:
    """One scripted model reply: optional text, optional shell tool call, and the usage it reports."""

    text: str | None = None
    command: str | None = None
    reasoning: str | None = None
    input_tokens: int = 120
    output_tokens: int = 30
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    hang: bool = False


def hang() -> Reply:
    """A reply that never comes: the request is held open until the server stops (for timeouts)."""
    return Reply(hang=True)


def shell(
    command: str, *, input_tokens: int = 120, output_tokens: int = 30, cache_read_tokens: int = 0
) -> Reply:
    """A reply that asks the agent to run ``command`` in its shell tool."""
    return Reply(
        command=command,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
    )


def say(text: str, *, input_tokens: int = 120, output_tokens: int = 30, cache_read_tokens: int = 0) -> Reply:
    """A final text reply that ends the agent's turn."""
    return Reply(
        text=text,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
    )


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the fake received it; ``body`` is the parsed JSON body or ``None``."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _State:
    script: tuple[Reply, ...]
    fail_status: int | None
    when: tuple[tuple[str, tuple[Reply, ...]], ...] = ()
    requests: list[RecordedRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> int:
        with self.lock:
            return next(self.ids)

    def reply_at(self, position: int, body: Any = None) -> Reply:
        script = self.script
        if self.when:
            # The first script whose marker the request carries anywhere (system text, messages, tools).
            text = json.dumps(body, ensure_ascii=False)
            script = next((replies for marker, replies in self.when if marker in text), script)
        if position < len(script):
            return script[position]
        return say("(the fake model server's script is exhausted)")


_ANTHROPIC_401: dict[str, Any] = {
    "type": "error",
    "error": {"type": "authentication_error", "message": "invalid x-api-key"},
}
_OPENAI_401: dict[str, Any] = {
    "error": {
        "message": "Incorrect API key provided.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_api_key",
    }
}


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # the test output stays quiet
        return

    def _record(self) -> Any:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        state = self.server.state
        with state.lock:
            state.requests.append(
                RecordedRequest(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
            )
        return body

    def _json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_HEAD(self) -> None:
        self._record()
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._record()
        if self.headers.get("upgrade", "").lower() == "websocket":
            # Codex tries a WebSocket first and falls back to HTTP streaming on 426.
            self._json(426, {"error": {"message": "websockets are not served here"}})
        else:
            self._json(404, {"error": {"message": f"no route for GET {self.path}"}})

    def do_POST(self) -> None:
        body = self._record()
        path = self.path.split("?", 1)[0]
        state = self.server.state
        if path == "/v1/messages":
            protocol, error_body = _anthropic_events, _ANTHROPIC_401
            position = _count(body, "messages", lambda m: m.get("role") == "assistant")
        elif path == "/v1/responses":
            protocol, error_body = _openai_events, _OPENAI_401
            position = _count(body, "input", lambda i: i.get("type") == "function_call_output")
        else:
            self._json(404, {"error": {"message": f"no route for POST {path}"}})
            return
        if state.fail_status is not None:
            self._json(state.fail_status, error_body)
            return
        reply = state.reply_at(position, body)
        if reply.hang:
            state.stopping.wait()
            self.close_connection = True
            return
        model = body.get("model") if isinstance(body, dict) else None
        self._stream(protocol(reply, state.next_id(), model if isinstance(model, str) else "fake-model"))

    def _stream(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


def _count(body: Any, key: str, matches: Any) -> int:
    """How many model replies the conversation in ``body`` already holds (the script position)."""
    entries = body.get(key, []) if isinstance(body, dict) else []
    return sum(1 for entry in entries if isinstance(entry, dict) and matches(entry))


def _anthropic_events(reply: Reply, n: int, model: str) -> list[tuple[str, dict[str, Any]]]:
    usage = {
        "input_tokens": reply.input_tokens,
        "output_tokens": 1,
        "cache_creation_input_tokens": reply.cache_write_tokens,
        "cache_read_input_tokens": reply.cache_read_tokens,
    }
    start = {"id": f"msg_fake{n:04d}", "type": "message", "role": "assistant", "model": model}
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {**start, "content": [], "stop_reason": None, "usage": usage},
            },
        )
    ]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if reply.text is not None:
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": reply.text}))
    if reply.command is not None:
        arguments = json.dumps({"command": reply.command, "description": "run a command"})
        blocks.append(
            (
                {"type": "tool_use", "id": f"toolu_fake{n:04d}", "name": "Bash", "input": {}},
                {"type": "input_json_delta", "partial_json": arguments},
            )
        )
    for index, (block, delta) in enumerate(blocks):
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    stop = "tool_use" if reply.command is not None else "end_turn"
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": reply.output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _openai_events(reply: Reply, n: int, model: str) -> list[tuple[str, dict[str, Any]]]:
    response_id = f"resp_fake{n:04d}"
    output: list[dict[str, Any]] = []
    if reply.reasoning is not None:
        summary = [{"type": "summary_text", "text": reply.reasoning}]
        output.append({"type": "reasoning", "id": f"rs_fake{n:04d}", "summary": summary})
    if reply.text is not None:
        content = [{"type": "output_text", "text": reply.text, "annotations": []}]
        output.append({"type": "message", "id": f"msg_fake{n:04d}", "role": "assistant", "content": content})
    if reply.command is not None:
        output.append(
            {
                "type": "function_call",
                "id": f"fc_fake{n:04d}",
                "call_id": f"call_fake{n:04d}",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": reply.command}),
            }
        )
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": {"id": response_id}})
    ]
    for index, item in enumerate(output):
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    usage = {
        "input_tokens": reply.input_tokens + reply.cache_read_tokens,
        "input_tokens_details": {"cached_tokens": reply.cache_read_tokens},
        "output_tokens": reply.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.input_tokens + reply.cache_read_tokens + reply.output_tokens,
    }
    events.append(
        (
            "response.completed",
            {"type": "response.completed", "response": {"id": response_id, "usage": usage}},
        )
    )
    return events


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Agents hang up mid-request when a trial is killed; that is not the fake's failure.
        return


class ModelServer:
    """The fake API on ``127.0.0.1`` and a free port, served from a background thread.

    Args:
        script: the model replies by conversation position (see the module docstring).
        fail_status: answer every model request with this HTTP status and the provider's own error
            body instead (``401`` for an authentication failure).
        when: marker → script: a request whose body contains the marker is answered from that script
            instead (a model that follows an instruction file only when the file reached it).
    """

    def __init__(
        self,
        script: Sequence[Reply] = (),
        *,
        fail_status: int | None = None,
        when: Mapping[str, Sequence[Reply]] | None = None,
    ) -> None:
        branches = tuple((marker, tuple(replies)) for marker, replies in (when or {}).items())
        self._state = _State(tuple(script), fail_status, branches)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> ModelServer:
        """Bind and start serving; returns ``self`` so ``ModelServer(...).start()`` reads naturally."""
        server = _Server(("127.0.0.1", 0), _Handler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="fake-model-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port (held requests are let go first)."""
        self._state.stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The base URL, without ``/v1`` (``ANTHROPIC_BASE_URL`` wants it so)."""
        if self._server is None:
            raise RuntimeError("the fake model server is not running; call start() or use it as a context")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """The base URL with ``/v1``, as Codex's ``openai_base_url`` wants it."""
        return f"{self.url}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, in arrival order."""
        with self._state.lock:
            return list(self._state.requests)

    def model_requests(self) -> list[RecordedRequest]:
        """Only the POSTs to a model endpoint (probes and WebSocket attempts left out)."""
        return [
            r
            for r in self.requests
            if r.method == "POST" and r.path.split("?")[0].endswith(("/messages", "/responses"))
        ]
