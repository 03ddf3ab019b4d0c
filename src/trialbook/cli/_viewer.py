"""What ``report --html`` and ``view`` share: history options, and the loopback server of ``view``."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from ..report.history_view import history_json
from ._common import DEFAULT_HISTORY_DIR, env_option, history_place
from .history_cmd import read_history

__all__ = ["history_options", "history_summaries", "make_server"]

F = TypeVar("F", bound=Callable[..., Any])


def history_options(func: F) -> F:
    """``--history-dir``, ``--history-branch`` and ``--last``: where the trends come from."""
    func = click.option(
        "--last", "last_n", type=click.IntRange(min=1), default=10, show_default=True, help="Runs per trend."
    )(func)
    func = env_option(
        "--history-branch",
        metavar="NAME",
        help="Add trends from this history git branch (local or origin's).",
    )(func)
    return env_option(
        "--history-dir",
        type=click.Path(file_okay=False),
        help=f"Add trends from history in DIR/<id>.jsonl [default: {DEFAULT_HISTORY_DIR} when it exists, "
        "unless --history-branch is given].",
    )(func)


def history_summaries(history_dir: str | None, history_branch: str | None, last_n: int) -> list[Any] | None:
    """The trend summaries for the page; ``None`` where there is none (the default folder is missing)."""
    history_dir, history_branch = history_place(history_dir, history_branch)
    if history_dir is not None and not Path(history_dir).is_dir():
        return None
    grouped, problems = read_history(history_dir, history_branch)
    for problem in problems:
        click.echo(f"warning: {problem}", err=True)
    return history_json(grouped, last_n=last_n)


class _Handler(http.server.BaseHTTPRequestHandler):
    """``/`` is the page; ``/files/<path>`` a regular file inside the run folder; anything else 404."""

    page: bytes = b""
    root: Path = Path()

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal shows the address and the stop message, not every request."""

    def _send(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        """Serve the page or one raw trial file."""
        path = self.path.split("?", 1)[0]
        if path in ("/", "/index.html"):
            self._send(200, self.page, "text/html; charset=utf-8")
            return
        if path.startswith("/files/"):
            from urllib.parse import unquote

            target = (self.root / unquote(path[len("/files/") :])).resolve()
            if self.root in target.parents and target.is_file():
                # Raw evidence is shown as text, never run as a page of this origin.
                self._send(200, target.read_bytes(), "text/plain; charset=utf-8")
                return
        self._send(404, b"not found\n", "text/plain; charset=utf-8")


def make_server(page: bytes, root: Path, port: int) -> http.server.ThreadingHTTPServer:
    """A server bound to 127.0.0.1 only (``port`` 0 picks a free port)."""
    handler = type("ViewerHandler", (_Handler,), {"page": page, "root": root.resolve()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def serve_until_interrupted(server: http.server.ThreadingHTTPServer, on_ready: Callable[[], None]) -> None:
    """Serve until Ctrl-C (or SIGTERM turned into KeyboardInterrupt), then close the socket."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        on_ready()
        thread.join()
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()
        server.server_close()
