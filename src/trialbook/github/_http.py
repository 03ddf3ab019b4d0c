"""A small GitHub REST client on the standard library: JSON in and out, pagination, bounded retries.

trialbook makes a handful of API calls per run (one page or two of comments, one write), so a client
library would be a dependency for very little. What matters is getting the edges right: retry only what
is transient, back off as the API asks, never send the token anywhere but the configured API host, and
never put it in a message.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ._env import DEFAULT_API_URL

__all__ = ["ApiResponse", "GitHubApi", "GitHubApiError"]

API_VERSION = "2022-11-28"
_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="next"')
_MAX_RETRY_AFTER_S = 60.0


class GitHubApiError(Exception):
    """A request failed for good (after any retries). The message never contains the token.

    Attributes:
        status: HTTP status, or ``None`` when no response arrived.
    """

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ApiResponse:
    """A successful response: status, lower-cased headers and the decoded JSON body (``None`` if empty)."""

    status: int
    headers: Mapping[str, str]
    body: Any


def _secondary_rate_limited(status: int, headers: Mapping[str, str], text: str) -> bool:
    if status == 429:
        return True
    if status != 403:
        return False
    return (
        "retry-after" in headers
        or headers.get("x-ratelimit-remaining") == "0"
        or "rate limit" in text.lower()
    )


class GitHubApi:
    """Authenticated JSON requests against one GitHub API root.

    Args:
        token: a GitHub token (the workflow's ``GITHUB_TOKEN`` or a PAT).
        api_url: the API root; ``GITHUB_API_URL`` in Actions. Must be https, except on loopback addresses
            (used by tests), so the token never travels in clear text.
        retries: how many times a transient failure (5xx, secondary rate limit, connection error) is retried.
        backoff_s: first wait between attempts, doubled each time unless the API sends ``Retry-After``.
        timeout_s: socket timeout of one attempt.
        sleep: how to wait; tests pass a recorder so they never sleep.
    """

    def __init__(
        self,
        token: str,
        *,
        api_url: str = DEFAULT_API_URL,
        retries: int = 3,
        backoff_s: float = 1.0,
        timeout_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        parts = urllib.parse.urlsplit(api_url)
        if parts.scheme != "https" and not (parts.scheme == "http" and parts.hostname in _LOOPBACK):
            raise ValueError(f"api_url {api_url!r}: use https so the token is not sent in clear text")
        self._token = token
        self._root = api_url.rstrip("/")
        self._origin = (parts.scheme, parts.netloc)
        self._retries = retries
        self._backoff_s = backoff_s
        self._timeout_s = timeout_s
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"GitHubApi(api_url={self._root!r})"

    def _url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            parts = urllib.parse.urlsplit(path)
            if (parts.scheme, parts.netloc) != self._origin:
                raise GitHubApiError(f"refusing to send the token to {parts.scheme}://{parts.netloc}")
            return path
        return f"{self._root}/{path.lstrip('/')}"

    def _build(self, method: str, url: str, body: Mapping[str, Any] | None) -> urllib.request.Request:
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Accept", "application/vnd.github+json")
        request.add_header("X-GitHub-Api-Version", API_VERSION)
        request.add_header("User-Agent", f"trialbook/{__version__}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        # Unredirected: urllib would otherwise copy the token onto a redirect to another host.
        request.add_unredirected_header("Authorization", f"Bearer {self._token}")
        return request

    def _wait(self, attempt: int, headers: Mapping[str, str]) -> None:
        retry_after = headers.get("retry-after", "")
        if retry_after.isdigit():
            delay = min(float(retry_after), _MAX_RETRY_AFTER_S)
        else:
            delay = self._backoff_s * (2**attempt)
        self._sleep(delay)

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> ApiResponse:
        """Send one request, retrying transient failures; raise :class:`GitHubApiError` otherwise."""
        url = self._url(path)
        where = f"{method} {urllib.parse.urlsplit(url).path}"
        for attempt in range(self._retries + 1):
            last = attempt == self._retries
            try:
                with urllib.request.urlopen(
                    self._build(method, url, body), timeout=self._timeout_s
                ) as response:
                    raw = response.read()
                    headers = {k.lower(): v for k, v in response.headers.items()}
                    return ApiResponse(response.status, headers, json.loads(raw) if raw.strip() else None)
            except urllib.error.HTTPError as exc:
                headers = {k.lower(): v for k, v in exc.headers.items()}
                text = exc.read().decode("utf-8", errors="replace")
                transient = exc.code >= 500 or _secondary_rate_limited(exc.code, headers, text)
                if transient and not last:
                    self._wait(attempt, headers)
                    continue
                raise GitHubApiError(f"{where}: HTTP {exc.code}: {_api_message(text)}", exc.code) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if not last:
                    self._wait(attempt, {})
                    continue
                reason = getattr(exc, "reason", exc)
                raise GitHubApiError(f"{where}: no response ({reason})") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def paginate(self, path: str) -> Iterator[Any]:
        """Yield the items of a list endpoint across every page, following the ``Link: rel="next"`` header."""
        url: str | None = path
        while url is not None:
            response = self.request("GET", url)
            if not isinstance(response.body, list):
                raise GitHubApiError(f"GET {path}: expected a JSON list, got {type(response.body).__name__}")
            yield from response.body
            match = _NEXT_LINK.search(response.headers.get("link", ""))
            url = match.group(1) if match else None


def _api_message(text: str) -> str:
    try:
        payload = json.loads(text)
    except ValueError:
        return text.strip()[:200] or "no message"
    message = payload.get("message") if isinstance(payload, dict) else None
    return str(message) if message else "no message"
