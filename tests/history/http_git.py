"""A loopback smart-HTTP git server: ``git http-backend`` behind HTTP Basic auth, like GitHub's."""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


@dataclass
class Seen:
    """What the server received, for assertions."""

    authorizations: list[str | None] = field(default_factory=list)
    refused: int = 0


def _body(handler: BaseHTTPRequestHandler) -> bytes:
    """A request's body, chunked or with a length."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks: list[bytes] = []
        while True:
            size = int(handler.rfile.readline().strip().split(b";")[0], 16)
            if size == 0:
                handler.rfile.readline()
                return b"".join(chunks)
            chunks.append(handler.rfile.read(size))
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("Content-Length", "0")))


@contextmanager
def serve(project_root: Path, user: str, password: str, env: dict[str, str]) -> Iterator[tuple[str, Seen]]:
    """Serve every repository under ``project_root`` at ``http://127.0.0.1:<port>/``."""
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    seen = Seen()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # quiet: the tests read ``seen``
            pass

        def do_GET(self) -> None:
            self._handle(b"")

        def do_POST(self) -> None:
            self._handle(_body(self))

        def _handle(self, body: bytes) -> None:
            auth = self.headers.get("Authorization")
            seen.authorizations.append(auth)
            if auth is None or auth.lower() != expected.lower():
                seen.refused += 1
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            path, _, query = self.path.partition("?")
            cgi_env = {
                **env,
                "GIT_PROJECT_ROOT": str(project_root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": user,
                "REMOTE_ADDR": "127.0.0.1",
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            }
            done = subprocess.run(
                ["git", "http-backend"], input=body, env=cgi_env, capture_output=True, check=False
            )
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status = 200
            headers = []
            for raw in head.split(b"\r\n"):
                name, _, value = raw.decode().partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def receive_pack_enabled(bare: Path) -> None:
    """http-backend refuses pushes from unauthenticated users unless told; ours always authenticate."""
    subprocess.run(["git", "config", "http.receivepack", "true"], cwd=bare, check=True, env=dict(os.environ))
