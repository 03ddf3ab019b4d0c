"""Credentials for fetch and push, and the push-rejection channel.

libgit2 neither runs git credential helpers nor reads ``http.extraheader``, which is where
actions/checkout leaves its token. So trialbook takes the token explicitly (the action passes
``github-token``) and offers it as ``x-access-token`` basic auth. Without a token it falls back to an
``extraheader`` found in the repository's config (includes resolved, which covers checkout v6's
``includeIf`` file) and sends it as a custom header. The token never goes into a URL or a message.
"""

from __future__ import annotations

import re

import pygit2
from pygit2.enums import CredentialType

from ._protocol import HistoryAuthError

__all__ = ["MAX_CREDENTIAL_CALLS", "Callbacks", "extraheader_for", "safe_url"]

_PROGRESS = re.compile(r"^(Counting|Compressing|Writing|Total|Resolving|Enumerating) ")

MAX_CREDENTIAL_CALLS = 2
"""libgit2 asks again after every 401; a wrong token would otherwise be retried without end."""


class Callbacks(pygit2.RemoteCallbacks):
    """Callbacks for one network operation; make a fresh one per fetch or push.

    pygit2 keeps an exception raised inside a callback on this object and re-raises it after the
    operation, so reusing an instance could resurface an old failure.
    """

    def __init__(self, *, token: str | None, extraheader: str | None, url: str) -> None:
        super().__init__()
        self._token = token
        self._extraheader = extraheader
        self._url = url
        self.credential_calls = 0
        self.rejections: list[tuple[str, str]] = []
        self._remote_text: list[str] = []

    def credentials(
        self, url: str, username_from_url: str | None, allowed_types: CredentialType
    ) -> pygit2.UserPass | pygit2.KeypairFromAgent:
        """Offer the token once per attempt libgit2 makes, and stop after a bounded number."""
        self.credential_calls += 1
        if self.credential_calls > MAX_CREDENTIAL_CALLS:
            raise HistoryAuthError(
                f"the remote {safe_url(self._url)} rejected the credentials {MAX_CREDENTIAL_CALLS} times; "
                "check that the token may write to this repository (permissions: contents: write)"
            )
        if self._token and allowed_types & CredentialType.USERPASS_PLAINTEXT:
            return pygit2.UserPass("x-access-token", self._token)
        if allowed_types & CredentialType.SSH_KEY:
            return pygit2.KeypairFromAgent(username_from_url or "git")
        if not self._token:
            raise HistoryAuthError(
                f"the remote {safe_url(self._url)} asks for credentials and trialbook has no token; "
                "pass the github-token input (or set GITHUB_TOKEN)"
            )
        raise HistoryAuthError(
            f"the remote {safe_url(self._url)} accepts no credential type trialbook can offer "
            "(it sends a token as HTTPS basic auth)"
        )

    def custom_headers(self) -> list[str] | None:
        """Send a checkout-persisted ``extraheader`` only when no explicit token was given."""
        if self._token or not self._extraheader:
            return None
        return [self._extraheader]

    def sideband_progress(self, string: str) -> None:
        """What the remote prints for the user (``remote: ...`` in git): a hook's reason arrives here."""
        self._remote_text.append(string)

    @property
    def remote_messages(self) -> str:
        """The remote's own messages, one line each, progress counters left out and the token masked."""
        lines = "".join(self._remote_text).replace("\r", "\n").splitlines()
        kept = [line.strip() for line in lines if line.strip() and not _PROGRESS.match(line.strip())]
        text = "; ".join(dict.fromkeys(kept))
        return text.replace(self._token, "***") if self._token else text

    def push_update_reference(self, refname: str, message: str | None) -> None:
        """A real server reports a refused update only here; ``push()`` itself returns normally."""
        if message:
            self.rejections.append((refname, message))


def extraheader_for(repo: pygit2.Repository, url: str) -> str | None:
    """The ``http.<prefix>.extraheader`` (or ``http.extraheader``) git would send to ``url``.

    Picks the longest matching URL prefix, as git does; the last value of a multi-valued key wins.
    """
    best: tuple[int, str] | None = None
    for entry in repo.config:
        name = entry.name or ""
        if not name.startswith("http.") or not name.lower().endswith(".extraheader") or not entry.value:
            continue
        prefix = name[len("http.") : -len(".extraheader")]
        if prefix and not url.startswith(prefix):
            continue
        if best is None or len(prefix) >= best[0]:
            best = (len(prefix), entry.value)
    return best[1] if best else None


def safe_url(url: str) -> str:
    """The URL without any userinfo, so a token someone put there is never echoed."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host_and_path = rest.rsplit("@", 1)[-1] if "@" in rest.split("/", 1)[0] else rest
    return f"{scheme}://{host_and_path}"
