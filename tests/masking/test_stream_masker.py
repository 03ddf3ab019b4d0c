"""Masking chunk by chunk gives what masking the whole stream gives, however the stream is split.

The property attacks the held-back window: secrets (and their encoded forms) placed anywhere, across
any split points, including splits inside a form and chunks shorter than the longest form.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.masking import Masker, secret_forms
from trialbook.masking._stream import StreamMasker

SECRETS = ("s3cr3t-VALUE-0042", "tok_abcdefgh", "pa55/w+rd")


def _stream(masker: Masker, data: bytes, cuts: list[int]) -> bytes:
    streaming = StreamMasker(masker)
    out = []
    last = 0
    for cut in sorted({min(max(c, 0), len(data)) for c in cuts}):
        out.append(streaming.feed(data[last:cut]))
        last = cut
    out.append(streaming.feed(data[last:]))
    out.append(streaming.close())
    return b"".join(out)


pieces = st.lists(
    st.one_of(
        st.sampled_from(sorted({form for value in SECRETS for form in secret_forms(value)})),
        st.text(alphabet="abcdefghijkl-_/+=%0123456789 \n", max_size=40),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(pieces, st.lists(st.integers(min_value=0, max_value=2000), max_size=40))
def test_any_split_masks_like_the_whole_stream(parts: list[str], cuts: list[int]) -> None:
    masker = Masker(SECRETS)
    data = "".join(parts).encode()
    assert _stream(masker, data, cuts) == masker.bytes(data)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=500), st.integers(min_value=1, max_value=7))
def test_byte_by_byte_and_small_chunks(noise: bytes, size: int) -> None:
    masker = Masker(SECRETS)
    data = noise + SECRETS[0].encode() + noise + SECRETS[1].encode()
    cuts = list(range(0, len(data), size))
    streamed = _stream(masker, data, cuts)
    assert streamed == masker.bytes(data)
    assert SECRETS[0].encode() not in streamed and SECRETS[1].encode() not in streamed


def test_holds_back_at_most_one_form() -> None:
    masker = Masker(SECRETS)
    streaming = StreamMasker(masker)
    longest = max(len(form.encode()) for form in masker.forms)
    for _ in range(100):
        streaming.feed(b"x" * 4096)
        assert streaming.held < longest


def test_without_secrets_chunks_pass_through_unchanged() -> None:
    streaming = StreamMasker(Masker())
    assert streaming.feed(b"abc") == b"abc"
    assert streaming.close() == b""
