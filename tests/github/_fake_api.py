"""A loopback stand-in for the GitHub issue-comments API that records every request it gets."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeGitHub:
    """Comments of one repository, served ``page_size`` at a time with ``Link`` headers like GitHub."""

    repository: str = "acme/prompts"
    page_size: int = 2
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    # Pull requests served by GET /repos/{repository}/pulls, filtered by `head` (owner:branch) and `state`.
    pulls: list[dict[str, Any]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    # Responses to send, in order, before serving normally: (status, JSON body, extra headers).
    scripted: list[tuple[int, Any, dict[str, str]]] = field(default_factory=list)
    url: str = ""
    login: str | None = None
    """Who ``GET /user`` says the token is; ``None`` answers 403 like an installation token (GITHUB_TOKEN)."""
    heads: dict[int, str] = field(default_factory=dict)
    """Head commit of each pull request, for ``GET /repos/{repo}/pulls/{n}`` (404 when absent)."""
    _next_id: int = 1000

    def add_comment(self, pr: int, body: str, user: str = "someone") -> dict[str, Any]:
        self._next_id += 1
        comment = {
            "id": self._next_id,
            "body": body,
            "user": {"login": user},
            "html_url": f"https://github.com/{self.repository}/pull/{pr}#issuecomment-{self._next_id}",
        }
        self.comments.setdefault(pr, []).append(comment)
        return comment

    def handle(self, method: str, target: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        if self.scripted:
            return self.scripted.pop(0)
        parts = urlsplit(target)
        if parts.path == "/user" and method == "GET":
            if self.login is None:
                return 403, {"message": "Resource not accessible by integration", "status": "403"}, {}
            return 200, {"login": self.login, "type": "User"}, {}
        if (match := re.fullmatch(rf"/repos/{self.repository}/pulls/(\d+)", parts.path)) and method == "GET":
            head = self.heads.get(int(match.group(1)))
            if head is not None:
                return 200, {"number": int(match.group(1)), "head": {"sha": head}}, {}
        if parts.path == f"/repos/{self.repository}/pulls" and method == "GET":
            query = parse_qs(parts.query)
            head, state = query.get("head", [None])[0], query.get("state", ["open"])[0]
            return 200, [pr for pr in self.pulls if _pull_matches(pr, head, state)], {}
        prefix = f"/repos/{self.repository}/issues"
        if match := re.fullmatch(rf"{prefix}/(\d+)/comments", parts.path):
            pr = int(match.group(1))
            if method == "GET":
                page = int(parse_qs(parts.query).get("page", ["1"])[0])
                items = self.comments.get(pr, [])
                chunk = items[(page - 1) * self.page_size : page * self.page_size]
                headers = {}
                if page * self.page_size < len(items):
                    next_url = f"{self.url}{parts.path}?per_page=100&page={page + 1}"
                    headers["Link"] = f'<{next_url}>; rel="next", <{self.url}{parts.path}?page=9>; rel="last"'
                return 200, chunk, headers
            if method == "POST":
                return 201, self.add_comment(pr, body["body"], user=self.login or "github-actions[bot]"), {}
        if (match := re.fullmatch(rf"{prefix}/comments/(\d+)", parts.path)) and method == "PATCH":
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == int(match.group(1)):
                        comment["body"] = body["body"]
                        return 200, comment, {}
        return 404, {"message": "Not Found"}, {}


def _pull_matches(pr: dict[str, Any], head: str | None, state: str) -> bool:
    owner = pr["head"]["repo"]["owner"]["login"]
    return (head is None or head == f"{owner}:{pr['head']['ref']}") and state in ("all", pr["state"])


@contextmanager
def serve(fake: FakeGitHub) -> Iterator[FakeGitHub]:
    """Run ``fake`` on 127.0.0.1 on a free port for the duration of the block."""

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            fake.requests.append(
                Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
            status, payload, headers = fake.handle(self.command, self.path, body)
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PATCH = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
