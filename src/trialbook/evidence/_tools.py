"""One tool call as the agent's event stream showed it, with missing kept apart from empty."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ._json import JsonValue

__all__ = ["ToolCall", "ToolImage"]


@dataclass(frozen=True)
class ToolImage:
    """An image a tool returned: raw bytes and the media type when known."""

    content: bytes
    media_type: str | None


@dataclass(frozen=True)
class ToolCall:
    """A tool call and its completion.

    ``result`` is ``""`` for a genuinely empty output and ``None`` when no text was captured;
    ``completion_received`` is ``True`` (seen), ``False`` (still pending) or ``None`` (unknown);
    ``success`` is ``None`` when the outcome is unknown.
    """

    DERIVED: ClassVar[tuple[str, ...]] = ("evidence_complete",)
    """Properties the JSON codec writes beside the fields and checks again on load."""

    call_id: str | None
    name: str
    arguments: JsonValue
    completion_received: bool | None
    success: bool | None
    result: str | None
    error: str | None
    image_content: bytes | None = None
    image_media_type: str | None = None
    additional_images: tuple[ToolImage, ...] = ()

    @property
    def evidence_complete(self) -> bool:
        """Completion and outcome are known, and an output, an error or an image was captured."""
        return (
            self.completion_received is True
            and self.success is not None
            and (self.result is not None or self.error is not None or self.image_content is not None)
        )
