"""The excerpt a record keeps of a long local output: bounded, both ends kept, the cut said, no secret."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.agents._excerpt import EXCERPT_HEAD, EXCERPT_TAIL, excerpt, excerpt_marker, utf8_size
from trialbook.agents._local import LocalStep
from trialbook.masking import MASK, Masker
from trialbook.sandbox._capture import StreamCapture

BUDGET = EXCERPT_HEAD + EXCERPT_TAIL
MARKER = re.compile(
    r"\n\[trialbook: (\d+) bytes of this output left out here; the whole output is in (.+) in the trial "
    r"folder\]\n"
)
# Characters of every UTF-8 length, the mask's own star and line breaks, so cuts land everywhere.
CHARACTERS = st.sampled_from(["a", "é", "€", "😀", "*", "\n", MASK, "z"])
PIECES = st.lists(CHARACTERS, min_size=1, max_size=6).map("".join)


@st.composite
def outputs(draw: st.DrawFn) -> str:
    """Texts from empty to about three budgets long, most of them near the cut-or-not boundary."""
    unit = draw(PIECES)
    edge = BUDGET // utf8_size(unit)
    count = draw(st.integers(0, 3 * edge) | st.integers(max(0, edge - 40), edge + 40))
    return draw(st.text(max_size=40)) + unit * count + draw(st.text(max_size=40))


@settings(max_examples=300, deadline=None)
@given(outputs(), st.sampled_from(["script.log", "literal/step-3.out"]))
def test_the_excerpt_is_bounded_keeps_both_ends_and_says_the_cut(text: str, stored_in: str) -> None:
    kept = excerpt(text, stored_in)
    kept.encode("utf-8")  # whole characters only: a cut never splits one
    size = utf8_size(text)
    markers = list(MARKER.finditer(kept))
    if size <= BUDGET:
        assert kept == text
        assert not markers or MARKER.search(text)  # any marker here was in the output itself
        return
    # Cut: exactly one marker (the output's own text cannot hold one: it is made of PIECES)
    (marker,) = markers
    head, tail = kept[: marker.start()], kept[marker.end() :]
    assert text.startswith(head) and text.endswith(tail)
    assert utf8_size(head) <= EXCERPT_HEAD and utf8_size(tail) <= EXCERPT_TAIL
    # Preserved up to the bound, short only by a character and a mask it would have split
    assert utf8_size(head) > EXCERPT_HEAD - 4 - len(MASK) and utf8_size(tail) > EXCERPT_TAIL - 4 - len(MASK)
    assert int(marker.group(1)) == size - utf8_size(head) - utf8_size(tail) > 0
    assert marker.group(2) == stored_in
    assert utf8_size(kept) <= BUDGET + len(excerpt_marker(size, stored_in))


@settings(max_examples=200, deadline=None)
@given(
    secret=st.text(alphabet="0123456789abcdef", min_size=16, max_size=40),
    at_head=st.booleans(),
    shift=st.integers(-45, 5) | st.sampled_from([-2, -1]),  # -2, -1: the mask spans the cut
    far=st.integers(BUDGET // 2 + 64, BUDGET),
    chunk=st.integers(7, 5000),
)
def test_a_secret_across_the_cut_is_never_revealed(
    secret: str, at_head: bool, shift: int, far: int, chunk: int
) -> None:
    # The secret lies across the excerpt's head cut (or its tail cut), in a stream read in chunks that
    # split it anywhere; the stream is masked as read, then cut for the record. The other side is long
    # enough that the masked text is still cut.
    before = EXCERPT_HEAD + shift if at_head else far
    after = far if at_head else EXCERPT_TAIL + shift
    raw = ("x" * before + secret + "y" * max(0, after)).encode()
    stream = StreamCapture(len(raw) + 1024, Masker([secret]))
    for start in range(0, len(raw), chunk):
        stream.feed(raw[start : start + chunk])
    kept = excerpt(stream.finish().decode(), "script.log")
    assert MARKER.search(kept)
    pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
    assert not [piece for piece in pieces if piece in kept]
    # The mask is never split: every run of stars is whole masks.
    assert all(len(run) % len(MASK) == 0 for run in re.findall(r"\*+", kept))


def test_a_step_with_a_file_records_the_excerpt_and_one_without_keeps_its_output() -> None:
    output = "first line\n" + "a" * 100_000 + "\nlast line\n"
    stored = LocalStep("step-1", "bash", {"command": "loud"}, output, 0, stored_in="literal/step-1.out")
    result = stored.tool_call().result
    assert result is not None and len(result) < BUDGET + 200
    assert result.startswith("first line\n") and result.endswith("\nlast line\n")
    assert "the whole output is in literal/step-1.out" in result
    alone = LocalStep("script-1", "python", {"function": "m:f"}, output, 0)
    assert alone.tool_call().result == output
