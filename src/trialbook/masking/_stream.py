"""Masking a stream chunk by chunk, so output is masked before it is cut without ever being held whole.

A secret can arrive split across two reads of a pipe. :class:`StreamMasker` masks what it can decide and
holds back the last ``longest form - 1`` bytes (plus a form that runs across that point) until the next
chunk shows how they continue, so the bytes it releases are exactly what masking the whole stream at once
would give, while it never holds more than one chunk and one form (pure).
"""

from __future__ import annotations

from ._forms import utf8
from ._masker import Masker

__all__ = ["StreamMasker"]


class StreamMasker:
    """Feed raw chunks in order, get masked bytes out; :meth:`close` releases what was held back."""

    def __init__(self, masker: Masker) -> None:
        self._masker = masker
        self._pattern = masker.byte_pattern
        self._overlap = max((len(utf8(form)) for form in masker.forms), default=1) - 1
        self._held = b""

    @property
    def held(self) -> int:
        """Bytes waiting for the next chunk (at most the longest form's length minus one, plus a form)."""
        return len(self._held)

    def feed(self, chunk: bytes) -> bytes:
        """The masked bytes that no later chunk can change."""
        if self._pattern is None:
            return chunk
        data = self._held + chunk if self._held else chunk
        cut = len(data) - self._overlap
        if cut <= 0:
            self._held = data
            return b""
        # A form that starts before the cut and ends after it is decided already (nothing later can
        # change a match that fits in the data): release it whole rather than cut it in two.
        # The scan starts at 0, as masking the whole stream would: starting later could pick a match
        # inside one that an earlier position wins.
        for match in self._pattern.finditer(data):
            if match.start() >= cut:
                break
            if match.end() > cut:
                cut = match.end()
                break
        self._held = data[cut:]
        return self._masker.bytes(data[:cut])

    def close(self) -> bytes:
        """Everything still held, masked: the stream ended."""
        data, self._held = self._held, b""
        return self._masker.bytes(data) if data else b""
