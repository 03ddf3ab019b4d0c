"""A scripted loopback model API speaking Anthropic Messages and OpenAI Responses, streamed as SSE.

One server answers both: ``POST /v1/messages`` (Claude Code through ``ANTHROPIC_BASE_URL``, or Copilot's
``anthropic`` provider) and ``POST /v1/responses`` (Codex through ``base_url``, or Copilot's ``openai``
provider with ``wire_api: "responses"``). A request asking ``"stream": true`` is answered with the
provider's server-sent events, any other with one JSON body. The reply is picked by the conversation's
position, not by arrival order: the ``n``-th model reply of any conversation is ``script[n]``, so several
agents and trials sharing one server concurrently stay deterministic::

    with ModelServer([shell("echo hi > out.txt"), say("done")]) as server:
        env = server.claude_code_env()  # ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY
        options = server.codex_options()  # {"base_url": "http://127.0.0.1:PORT/v1"}
        server.requests  # every request received, in order
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from ._wire import Event, Turn, anthropic_body, responses_body, route, say

__all__ = ["ModelServer", "RecordedRequest"]


@dataclass(frozen=True)
class RecordedRequest:
    """A request as the server received it; ``body`` is the parsed JSON body, its text, or ``None``."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class _State:
    script: tuple[Turn, ...]
    fail_status: int | None
    when: tuple[tuple[str, tuple[Turn, ...]], ...] = ()
    fail_times: int | None = None
    failed: int = 0
    requests: list[RecordedRequest] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_id(self) -> int:
        with self.lock:
            return next(self.ids)

    def failure(self) -> int | None:
        """The status this model request fails with, ``None`` if it is answered (counted under the lock)."""
        with self.lock:
            if self.fail_times is not None and self.failed >= self.fail_times:
                return None
            self.failed += 1
            return self.fail_status

    def reply_at(self, position: int, body: Any = None) -> Turn:
        script = self.script
        if self.when:
            # The first script whose marker the request carries anywhere (system text, messages, tools).
            text = json.dumps(body, ensure_ascii=False)
            script = next((replies for marker, replies in self.when if marker in text), script)
        if position < len(script):
            return script[position]
        return say("(the loopback model's script is exhausted)")


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
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.server.state.lock:
            self.server.state.requests.append(RecordedRequest(self.command, self.path, headers, body))
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
        wire = route(path, body)
        if wire is None:
            self._json(404, {"error": {"message": f"no route for POST {path}"}})
            return
        events, error_body, position = wire
        status = state.failure()
        if status is not None:
            self._json(status, error_body)
            return
        reply = state.reply_at(position, body)
        if reply.hang:
            state.stopping.wait()
            self.close_connection = True
            return
        model = body.get("model") if isinstance(body, dict) else None
        model = model if isinstance(model, str) else "fake-model"
        stream = events(reply, state.next_id(), model)
        if isinstance(body, dict) and body.get("stream") is not True:
            self._json(
                200, anthropic_body(stream) if path == "/v1/messages" else responses_body(stream, model)
            )
        else:
            self._stream(stream)

    def _stream(self, events: list[Event]) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: _State

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Agents hang up mid-request when a trial is killed; that is not the server's failure.
        return


class ModelServer:
    """The scripted API on ``127.0.0.1`` and a free port, served from a background thread.

    Args:
        script: the model replies by conversation position (see the module docstring).
        fail_status: answer every model request with this HTTP status and the provider's own error
            body instead (``401`` for an authentication failure).
        fail_times: with ``fail_status``, only the first this many model requests fail; later ones are
            answered from the script (``[hang()]`` holds every retry open: no more than one retry is
            ever sent, however slowly the agent reacts to the failure).
        when: marker → script: a request whose body contains the marker is answered from that script
            instead (a model that follows an instruction file only when the file reached it).
        api_key: the key the settings hand out (random by default, so a leak is easy to find); the
            server itself checks no key.
        port: the loopback port to listen on; ``0`` (the default) picks a free one.
    """

    def __init__(
        self,
        script: Sequence[Turn] = (),
        *,
        fail_status: int | None = None,
        fail_times: int | None = None,
        when: Mapping[str, Sequence[Turn]] | None = None,
        api_key: str | None = None,
        port: int = 0,
    ) -> None:
        branches = tuple((marker, tuple(replies)) for marker, replies in (when or {}).items())
        self._state = _State(tuple(script), fail_status, branches, fail_times)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.api_key = api_key or "sk-loopback-" + secrets.token_hex(24)
        self._port = port

    def start(self) -> ModelServer:
        """Bind and start serving; returns ``self`` so ``ModelServer(...).start()`` reads naturally."""
        server = _Server(("127.0.0.1", self._port), _Handler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="loopback-model", daemon=True)
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
            raise RuntimeError("the loopback model is not running; call start() or use it as a context")
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """The base URL with ``/v1``, as Codex's ``base_url`` wants it."""
        return f"{self.url}/v1"

    def claude_code_env(self) -> dict[str, str]:
        """The environment that points Claude Code here: ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY``."""
        return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": self.api_key}

    def codex_options(self) -> dict[str, str]:
        """The ``codex`` agent options that point Codex here (a custom ``base_url`` needs no key)."""
        return {"base_url": self.openai_url}

    def copilot_provider(self, wire: Literal["anthropic", "responses"] = "anthropic") -> dict[str, str]:
        """A Copilot bring-your-own-key ``provider`` for this server, over Anthropic Messages or Responses."""
        if wire == "anthropic":
            return {"type": "anthropic", "base_url": self.url, "api_key": self.api_key}
        return {
            "type": "openai",
            "wire_api": "responses",
            "base_url": self.openai_url,
            "api_key": self.api_key,
        }

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
