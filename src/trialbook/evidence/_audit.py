"""One outgoing model request as an agent actually sent it: the request audit's record."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RequestAudit"]

_SHA256 = r"[0-9a-f]{64}"  # compiled (and cached by ``re``) for the first audit


@dataclass(frozen=True)
class RequestAudit:
    """One outgoing model request (or one validated WebSocket ``response.create`` message), as sent.

    ``instructions_sha256`` hashes the system/developer text actually sent, joined in order with two
    newlines; the text itself is never stored.
    """

    request_id: str | None
    model: str | None
    tool_names: tuple[str, ...]
    reasoning_effort: str | None
    image_details: tuple[str | None, ...]
    image_count: int
    instructions_sha256: str

    def impossible(self) -> list[tuple[str, str]]:
        """Values no real request can have, as ``(field, why)``; the codec refuses a record with any."""
        found: list[tuple[str, str]] = []
        if self.image_count < 0:
            found.append(("image_count", f"{self.image_count} is negative"))
        elif self.image_count != len(self.image_details):
            found.append(
                (
                    "image_count",
                    f"{self.image_count} but image_details lists {len(self.image_details)} image(s)",
                )
            )
        if re.fullmatch(_SHA256, self.instructions_sha256) is None:
            found.append(("instructions_sha256", "not a SHA-256 digest (64 lowercase hex digits)"))
        return found
