"""A captured stream keeps a head and a tail within the limit, says what it dropped, and never a raw secret.

The attacks: a secret laid exactly across the cut point and across a chunk boundary at once, every
offset around the cut, streams far larger than the limit fed in odd chunk sizes, UTF-8 cut mid-character.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.masking import Masker
from trialbook.sandbox._capture import OutputCapture, StreamCapture, cut_marker

SECRET = "sk-live-0123456789abcdef"
LIMIT = 4096
MARKER = re.compile(rb"\n\[trialbook: (\d+) bytes of output cut here, [^\]]*\]\n")


def _capture(chunks: list[bytes], limit: int = LIMIT, secrets: tuple[str, ...] = (SECRET,)) -> StreamCapture:
    stream = StreamCapture(limit, Masker(secrets))
    for chunk in chunks:
        stream.feed(chunk)
    return stream


def test_a_stream_within_the_limit_is_kept_whole() -> None:
    stream = _capture([b"a" * 1000, b"b" * 3096])
    assert stream.finish() == b"a" * 1000 + b"b" * 3096
    assert stream.dropped == 0


def test_a_longer_stream_keeps_head_marker_tail_and_counts_what_it_dropped() -> None:
    data = bytes(range(256)) * 40 + b"THE-END"
    stream = _capture([data[i : i + 999] for i in range(0, len(data), 999)], secrets=())
    kept = stream.finish()
    match = MARKER.search(kept)
    assert match is not None
    head, tail = kept[: match.start()], kept[match.end() :]
    assert int(match.group(1)) == stream.dropped == len(data) - len(head) - len(tail)
    assert len(head) + len(tail) <= LIMIT
    assert data.startswith(head) and data.endswith(tail) and tail.endswith(b"THE-END")
    assert len(kept) <= LIMIT + len(cut_marker(len(data), LIMIT))


@pytest.mark.parametrize("offset", range(-len(SECRET) - 2, 3))
@pytest.mark.parametrize("chunk", [1, 7, LIMIT // 2 - 5, 64 * 1024])
def test_a_secret_across_the_cut_and_a_chunk_boundary_never_appears(offset: int, chunk: int) -> None:
    # The head holds LIMIT - LIMIT // 2 bytes: put the secret so that it starts, runs across or ends
    # at that point, with the reads split inside it too.
    head = LIMIT - LIMIT // 2
    data = b"x" * (head + offset) + SECRET.encode() + b"y" * (3 * LIMIT)
    split = head + offset + len(SECRET) // 2
    chunks = [data[:split], *(data[i : i + chunk] for i in range(split, len(data), chunk))]
    kept = _capture(chunks).finish()
    assert MARKER.search(kept)
    for size in range(4, len(SECRET) + 1):  # no piece of it long enough to mean anything
        assert not any(SECRET[i : i + size].encode() in kept for i in range(len(SECRET) - size + 1))


def test_a_secret_in_the_tail_is_masked_and_the_tail_is_the_end() -> None:
    data = b"z" * (10 * LIMIT) + SECRET.encode() + b"\nlast line\n"
    kept = _capture([data[i : i + 333] for i in range(0, len(data), 333)]).finish()
    assert kept.endswith(b"***\nlast line\n")
    assert SECRET.encode() not in kept


@settings(max_examples=50, deadline=None)
@given(st.integers(min_value=1024, max_value=8192), st.integers(min_value=1, max_value=5000))
def test_utf8_text_cut_anywhere_still_decodes(limit: int, chunk: int) -> None:
    data = ("é漢😀a" * 5000).encode()
    stream = _capture([data[i : i + chunk] for i in range(0, len(data), chunk)], limit=limit, secrets=())
    kept = stream.finish()
    kept.decode("utf-8")  # strict: no half character on either side of the cut
    assert stream.dropped == len(data) - len(MARKER.sub(b"", kept))


def test_the_trial_record_names_each_stream() -> None:
    capture = OutputCapture(LIMIT, Masker())
    small, big = capture.stream(), capture.stream()
    small.feed(b"ok")
    big.feed(b"x" * (LIMIT * 3))
    small.finish()
    big.finish()
    capture.record("check-1", small)
    capture.record("script", big)
    assert capture.truncated == {"check-1": 0, "script": 2 * LIMIT}
    assert OutputCapture().truncated is None  # nothing captured: unknown, not "nothing cut"
    assert capture.name_for("check") == "check-2"
