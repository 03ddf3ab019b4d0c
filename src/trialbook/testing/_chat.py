"""A scripted loopback model speaking the OpenAI chat-completions API (Copilot's bring-your-own-key provider).

A reply is chosen by a function of the request body (default: the ``n``-th scripted reply for a
conversation that already holds ``n`` assistant messages), so concurrent sessions and subagents with their
own conversations stay deterministic. Non-streaming and streaming (SSE) requests are both answered.

    with ChatServer([call("bash", command="echo hi > out.txt"), text("done")]) as server:
        provider = {"type": "openai", "base_url": server.base_url, "api_key": server.api_key}
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ChatServer", "Reply", "call", "position", "text"]


@dataclass(frozen=True)
class Reply:
    """One assistant message: text and/or tool calls, and the usage it reports."""

    content: str | None = None
    tool_calls: tuple[tuple[str, str, dict[str, Any]], ...] = ()  # (call id, tool name, arguments)
    prompt_tokens: int = 100
    completion_tokens: int = 10

    def message(self) -> dict[str, Any]:
        calls = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in self.tool_calls
        ]
        return {"role": "assistant", "content": self.content, **({"tool_calls": calls} if calls else {})}


_ids = iter(range(1, 1_000_000))


def call(tool: str, call_id: str | None = None, **arguments: Any) -> Reply:
    """A reply asking for one tool call."""
    return Reply(tool_calls=((call_id or f"call_{next(_ids)}", tool, arguments),))


def text(content: str) -> Reply:
    """A final text reply."""
    return Reply(content=content)


def position(body: dict[str, Any]) -> int:
    """How many assistant messages the conversation in ``body`` already holds."""
    return sum(1 for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "assistant")


@dataclass
class ChatServer:
    """Serves ``POST /v1/chat/completions`` on 127.0.0.1 until closed; records every request body."""

    script: Sequence[Reply] | Callable[[dict[str, Any]], Reply]
    api_key: str = field(default_factory=lambda: "sk-test-" + secrets.token_hex(24))
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply_for(self, body: dict[str, Any]) -> Reply:
        if callable(self.script):
            return self.script(body)
        index = position(body)
        return self.script[index] if index < len(self.script) else text("(script exhausted)")

    def __enter__(self) -> ChatServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                server.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self.send_error(404)
                    return
                reply = server.reply_for(body)
                usage = {
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "total_tokens": reply.prompt_tokens + reply.completion_tokens,
                }
                finish = "tool_calls" if reply.tool_calls else "stop"
                base = {
                    "id": f"chatcmpl-{next(_ids)}",
                    "created": 1,
                    "model": body.get("model", "fake-model"),
                }
                if body.get("stream"):
                    self._stream(base, reply, finish, usage)
                    return
                payload = {
                    **base,
                    "object": "chat.completion",
                    "choices": [{"index": 0, "message": reply.message(), "finish_reason": finish}],
                    "usage": usage,
                }
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, base: dict[str, Any], reply: Reply, finish: str, usage: dict[str, int]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = reply.message()
                if "tool_calls" in delta:
                    delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(delta["tool_calls"])]
                chunks: list[dict[str, Any]] = [
                    {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {"choices": [], "usage": usage},
                ]
                for chunk in chunks:
                    event = {**base, "object": "chat.completion.chunk", **chunk}
                    self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    @property
    def base_url(self) -> str:
        """The provider ``base_url`` (ends in ``/v1``)."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def provider(self) -> dict[str, Any]:
        """A ready ``provider`` option pointing Copilot at this server."""
        return {"type": "openai", "base_url": self.base_url, "api_key": self.api_key}

    def chat_requests(self) -> Iterator[dict[str, Any]]:
        """Bodies of the chat-completion requests received so far."""
        return iter([r for r in self.requests if "messages" in r])
