"""Bounded output: every stream a trial captures keeps at most ``limits.output`` bytes, masked first.

An agent that prints 200 MB must not make trialbook hold or write 200 MB. Each stream (a script agent's
output, a literal step's output, a CLI agent's stderr, a check's output) goes through a
:class:`StreamCapture`: chunks are masked as they arrive (:class:`~trialbook.masking.StreamMasker`, so a
secret split by a read or by the cut is still masked whole), then kept as a head and a tail of half the
limit each, with a marker line where the middle was dropped. Memory stays at the limit whatever the
stream's size. :class:`OutputCapture` is one trial's: its limit, its masker and, per stream name, how many
bytes were dropped (``0`` when the stream was kept whole), which the evidence reports as
``output_truncated``.
"""

from __future__ import annotations

import threading
from collections import deque
from pathlib import Path

from ..masking import Masker, StreamMasker

__all__ = ["DEFAULT_OUTPUT_LIMIT", "MIN_OUTPUT_LIMIT", "OutputCapture", "StreamCapture", "cut_marker"]

DEFAULT_OUTPUT_LIMIT = 10 * 1024 * 1024
"""10 MiB per stream: far more than any useful transcript, far less than a runaway loop prints."""

MIN_OUTPUT_LIMIT = 1024
"""Below 1 KiB a head and a tail would hold less than the marker saying what was cut."""

_READ = 1 << 16


def cut_marker(dropped: int, limit: int) -> bytes:
    """The line put where the middle of a stream was dropped; it says how much and which limit."""
    return (
        f"\n[trialbook: {dropped} bytes of output cut here, over the limit of {limit} bytes per stream "
        "(limits.output in the eval file)]\n"
    ).encode()


class StreamCapture:
    """One stream: feed raw chunks, :meth:`finish` gives the masked bytes, cut to the limit."""

    def __init__(self, limit: int, masker: Masker) -> None:
        self.limit = limit
        self._tail_size = limit // 2
        self._head_size = limit - self._tail_size
        self._masker = StreamMasker(masker)
        self._head = bytearray()
        # The tail as the chunks it arrived in: whole chunks fall off the front, so keeping it costs
        # one copy per byte and at most one chunk over its size.
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self._seen = 0
        self.dropped: int | None = None
        """Bytes dropped from the middle, known once finished."""

    def feed(self, chunk: bytes) -> None:
        """Take the next raw chunk of the stream."""
        self._keep(self._masker.feed(chunk))

    def _keep(self, data: bytes) -> None:
        self._seen += len(data)
        room = self._head_size - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if not data:
            return
        self._tail.append(data)
        self._tail_bytes += len(data)
        while self._tail_bytes - len(self._tail[0]) >= self._tail_size:
            self._tail_bytes -= len(self._tail.popleft())

    def finish(self) -> bytes:
        """The stream as kept: whole when it fits the limit, else head, marker and tail."""
        self._keep(self._masker.close())
        extra = self._tail_bytes - self._tail_size
        if extra > 0:
            self._tail[0] = self._tail[0][extra:]
            self._tail_bytes -= extra
        head, self._head = bytes(self._head), bytearray()
        tail = b"".join(self._tail)
        self._tail.clear()
        self.dropped = self._seen - len(head) - len(tail)
        if not self.dropped:
            return head + tail
        head, tail = _utf8_safe(head, tail)
        self.dropped = self._seen - len(head) - len(tail)
        return b"".join((head, cut_marker(self.dropped, self.limit), tail))


def _utf8_safe(head: bytes, tail: bytes) -> tuple[bytes, bytes]:
    """Move the cut off the middle of a UTF-8 character, so both sides still decode."""
    for _ in range(3):
        if head and 0x80 <= head[-1] <= 0xBF:
            head = head[:-1]
        if tail and 0x80 <= tail[0] <= 0xBF:
            tail = tail[1:]
    if head and head[-1] >= 0xC0:  # a lead byte whose continuation was cut off
        head = head[:-1]
    return head, tail


class OutputCapture:
    """One trial's output limit and masker, and how much of each stream it had to drop."""

    def __init__(self, limit: int = DEFAULT_OUTPUT_LIMIT, masker: Masker | None = None) -> None:
        self.limit = limit
        self.masker = masker if masker is not None else Masker()
        self._dropped: dict[str, int] = {}
        self._lock = threading.Lock()

    def using(self, masker: Masker) -> OutputCapture:
        """The same limit and record, masking with ``masker`` (an adapter's extended one)."""
        view = OutputCapture(self.limit, masker)
        view._dropped, view._lock = self._dropped, self._lock
        return view

    def stream(self) -> StreamCapture:
        """A capture for one stream; hand it to :meth:`record` when it is finished."""
        return StreamCapture(self.limit, self.masker)

    def record(self, name: str, stream: StreamCapture) -> None:
        """Note a finished stream under ``name`` (a name used again adds to what was dropped)."""
        with self._lock:
            self._dropped[name] = self._dropped.get(name, 0) + (stream.dropped or 0)

    def file(self, path: Path, name: str | None) -> bytes:
        """A file's content read in chunks, masked and cut like a stream; recorded when ``name`` is given."""
        stream = self.stream()
        try:
            with open(path, "rb") as handle:
                while chunk := handle.read(_READ):
                    stream.feed(chunk)
        except OSError:
            pass
        data = stream.finish()
        if name is not None:
            self.record(name, stream)
        return data

    def name_for(self, prefix: str) -> str:
        """``prefix-1``, ``prefix-2``, …: the first name with this prefix not recorded yet."""
        with self._lock:
            index = 1
            while f"{prefix}-{index}" in self._dropped:
                index += 1
            name = f"{prefix}-{index}"
            self._dropped[name] = 0
            return name

    @property
    def truncated(self) -> dict[str, int] | None:
        """Bytes dropped per stream (``0``: kept whole), or ``None`` when no stream went through here."""
        with self._lock:
            return dict(self._dropped) if self._dropped else None
