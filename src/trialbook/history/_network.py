"""Time limits and refusal rules for fetching and pushing the history branch over a network.

libgit2 waits forever by default: a remote that accepts the connection and never answers would hold a run
before its first trial. Every fetch and push therefore runs with a connect timeout and an idle timeout
(the longest wait for the next byte, not for the whole transfer, so a large history over a slow link
still arrives). Both are process-wide libgit2 settings, applied before each operation.

A failure is retried only when it is a race another writer can cause (the branch moved, a ref lock was
held); a refusal that would only repeat (a hook declined the push, the credentials were rejected, the
remote cannot be reached in time) fails at once, with the remote's own words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from trialbook.errors import UsageError

__all__ = [
    "CONNECT_TIMEOUT_ENV",
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DEFAULT_IDLE_TIMEOUT_S",
    "IDLE_TIMEOUT_ENV",
    "NetworkTimeouts",
    "is_race",
]

DEFAULT_CONNECT_TIMEOUT_S = 10.0
"""Seconds to wait for a TCP connection to the remote."""

DEFAULT_IDLE_TIMEOUT_S = 30.0
"""Seconds to wait for the remote's next byte (or for it to take ours) before giving up."""

CONNECT_TIMEOUT_ENV = "TRIALBOOK_GIT_CONNECT_TIMEOUT"
IDLE_TIMEOUT_ENV = "TRIALBOOK_GIT_TIMEOUT"


def _seconds(value: float | str, name: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        raise UsageError(f"{name}: {value!r} is not a number of seconds (e.g. 30)") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"{name}: {value!r} must be a positive number of seconds (e.g. 30)")
    return seconds


@dataclass(frozen=True)
class NetworkTimeouts:
    """The connect and idle timeouts of history fetches and pushes, in seconds."""

    connect_s: float = DEFAULT_CONNECT_TIMEOUT_S
    idle_s: float = DEFAULT_IDLE_TIMEOUT_S

    @classmethod
    def resolve(
        cls, connect_s: float | None, idle_s: float | None, environ: Mapping[str, str]
    ) -> NetworkTimeouts:
        """Explicit values first, then ``TRIALBOOK_GIT_CONNECT_TIMEOUT`` / ``TRIALBOOK_GIT_TIMEOUT``.

        Raises:
            UsageError: a value is not a positive number of seconds.
        """
        connect = connect_s if connect_s is not None else environ.get(CONNECT_TIMEOUT_ENV)
        idle = idle_s if idle_s is not None else environ.get(IDLE_TIMEOUT_ENV)
        return cls(
            connect_s=DEFAULT_CONNECT_TIMEOUT_S
            if connect is None
            else _seconds(connect, CONNECT_TIMEOUT_ENV),
            idle_s=DEFAULT_IDLE_TIMEOUT_S if idle is None else _seconds(idle, IDLE_TIMEOUT_ENV),
        )

    def apply(self) -> None:
        """Set them in libgit2 for the operations that follow (the settings are process-wide)."""
        import pygit2  # here, not at the top: the timeouts are resolved in runs that never load libgit2

        pygit2.settings.server_connect_timeout = max(1, round(self.connect_s * 1000))
        pygit2.settings.server_timeout = max(1, round(self.idle_s * 1000))

    def explain(self, message: str) -> str:
        """``message`` with the limit that produced it named, when it is a timeout."""
        lowered = message.lower()
        if "timed out" not in lowered and "timeout" not in lowered:
            return message
        return (
            f"{message} (trialbook waits {self.connect_s:g}s to connect and {self.idle_s:g}s for each "
            f"answer; raise --git-connect-timeout/--git-timeout or {CONNECT_TIMEOUT_ENV}/{IDLE_TIMEOUT_ENV})"
        )


# What another writer can cause, so trying again after fetching can succeed. Anything else, a hook's
# refusal included, would be refused the same way again.
_RACE_WORDS = (
    "lock",
    "moved on the remote",
    "fetch first",
    "non-fast-forward",
    "fastforward",
    "not present locally",  # libgit2's own check: the remote branch has commits this clone lacks
    "failed to update ref",
    "stale info",
    "but expected",
)
_PERMANENT_WORDS = ("hook", "denied", "declined", "protected", "permission", "forbidden")
_PERMANENT_STATUS = r"\b40[13]\b"  # whole numbers only: object ids are full of digits; compiled when needed


def is_race(message: str) -> bool:
    """Whether a refused push (or failed fetch from a path remote) is a race worth another round."""
    lowered = message.lower()
    if any(word in lowered for word in _PERMANENT_WORDS) or re.search(_PERMANENT_STATUS, lowered):
        return False
    return any(word in lowered for word in _RACE_WORDS) or ("reference" in lowered and "not found" in lowered)
