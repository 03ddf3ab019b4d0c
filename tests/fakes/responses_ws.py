"""A loopback OpenAI Responses server over WebSocket (Copilot's ``transport: "websockets"`` provider).

Each ``response.create`` message is answered with the Responses stream events as text frames; the
``n``-th message on a connection gets ``script[n]``. Every message received is kept in ``messages``.

    with ResponsesSocket([call("bash", command="true"), text("done")]) as ws:
        provider = ws.provider()  # wire_api "responses", transport "websockets"
"""

from __future__ import annotations

import asyncio
import json
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.server import Server, ServerConnection, serve

from trialbook.testing import Reply, text

__all__ = ["ResponsesSocket", "response_events"]


def response_events(reply: Reply, n: int, model: str) -> list[dict[str, Any]]:
    """The stream events of one Responses reply: created, each output item, completed with usage."""
    items: list[dict[str, Any]] = []
    if reply.content is not None:
        content = [{"type": "output_text", "text": reply.content, "annotations": []}]
        message = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed"}
        items.append({**message, "content": content})
    for call_id, name, arguments in reply.tool_calls:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(arguments),
                "status": "completed",
            }
        )
    usage = {
        "input_tokens": reply.prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": reply.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
    response = {"id": f"resp_{n}", "object": "response", "model": model}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}
    ]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    done = {**response, "status": "completed", "output": items, "usage": usage}
    events.append({"type": "response.completed", "response": done})
    return events


@dataclass
class ResponsesSocket:
    """Serves ``ws://127.0.0.1:PORT/v1/responses`` from a background thread until closed."""

    script: Sequence[Reply]
    api_key: str = field(default_factory=lambda: "sk-test-" + secrets.token_hex(24))
    messages: list[Any] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    async def _serve_one(self, connection: ServerConnection) -> None:
        self.paths.append(connection.request.path if connection.request is not None else "")
        answered = 0
        async for data in connection:
            message = json.loads(data)
            self.messages.append(message)
            reply = self.script[answered] if answered < len(self.script) else text("(script exhausted)")
            answered += 1
            model = str(message.get("model") or "fake-model")
            for event in response_events(reply, len(self.messages), model):
                await connection.send(json.dumps(event))

    def __enter__(self) -> ResponsesSocket:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        async def run() -> None:
            self._stopping = asyncio.Event()
            async with serve(self._serve_one, "127.0.0.1", 0) as server:
                self._server: Server = server
                ready.set()
                await self._stopping.wait()

        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(run(),), daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stopping.set)
        self._thread.join(10)
        self._loop.close()

    @property
    def port(self) -> int:
        return int(next(iter(self._server.sockets)).getsockname()[1])

    @property
    def base_url(self) -> str:
        """The provider ``base_url``; Copilot turns it into ``ws://…/v1/responses`` itself."""
        return f"http://127.0.0.1:{self.port}/v1"

    def provider(self) -> dict[str, Any]:
        """A ``provider`` option sending Copilot's Responses requests over this WebSocket server."""
        return {
            "type": "openai",
            "wire_api": "responses",
            "transport": "websockets",
            "base_url": self.base_url,
            "api_key": self.api_key,
        }
