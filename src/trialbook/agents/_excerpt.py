"""A bounded excerpt of a local step's output for the JSON records, so the output is stored once.

A script agent's output and each literal step's output are kept whole (up to ``limits.output``) in one
file of the trial folder (``script.log``, ``literal/step-N.out``). The tool call's ``result`` in
``result.json`` and ``suite.json`` would otherwise repeat up to 10 MiB of it per record; it keeps the first
:data:`EXCERPT_HEAD` and the last :data:`EXCERPT_TAIL` bytes instead, with one line between them naming the
file and how much was left out. Both ends are kept because the start says what ran and the end says how it
failed. The text given is already masked (at capture), so the cut never reveals a secret; it also never
falls inside a mask or a character.
"""

from __future__ import annotations

from ..masking import MASK

__all__ = ["EXCERPT_HEAD", "EXCERPT_TAIL", "excerpt", "excerpt_marker", "utf8_size"]

EXCERPT_HEAD = 8 * 1024
"""UTF-8 bytes kept from the start of a long output in the JSON records."""

EXCERPT_TAIL = 8 * 1024
"""UTF-8 bytes kept from the end; head and tail together stay within what the HTML viewer embeds whole."""


def utf8_size(text: str) -> int:
    """The text's size in UTF-8 bytes, without copying an ASCII text (the common case) to count it."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def excerpt_marker(left_out: int, stored_in: str) -> str:
    """The line standing where the middle of an output was left out of a record."""
    return (
        f"\n[trialbook: {left_out} bytes of this output left out here; the whole output is in "
        f"{stored_in} in the trial folder]\n"
    )


def _fits(text: str, budget: int) -> bool:
    return utf8_size(text) <= budget


def _head_end(text: str, budget: int) -> int:
    """The largest character count whose prefix fits ``budget`` bytes (a prefix never splits a character)."""
    low, high = 0, min(len(text), budget)
    while low < high:
        middle = (low + high + 1) // 2
        if _fits(text[:middle], budget):
            low = middle
        else:
            high = middle - 1
    return low


def _tail_start(text: str, budget: int) -> int:
    """The smallest start index whose suffix fits ``budget`` bytes."""
    low, high = max(0, len(text) - budget), len(text)
    while low < high:
        middle = (low + high) // 2
        if _fits(text[middle:], budget):
            high = middle
        else:
            low = middle + 1
    return low


def _around_mask(text: str, cut: int, *, forward: bool) -> int:
    """Move a cut that falls inside a mask to the mask's start (a head's end) or end (a tail's start)."""
    start = text.find(MASK, max(0, cut - len(MASK) + 1), cut + len(MASK) - 1)
    if start == -1 or not start < cut < start + len(MASK):
        return cut
    return start + len(MASK) if forward else start


def excerpt(text: str, stored_in: str) -> str:
    """``text`` when it fits the excerpt's bytes, else its head, a marker naming ``stored_in``, its tail."""
    budget = EXCERPT_HEAD + EXCERPT_TAIL
    if len(text) <= budget // 4 or (len(text) <= budget and _fits(text, budget)):
        return text
    head_end = _around_mask(text, _head_end(text, EXCERPT_HEAD), forward=False)
    tail_start = _around_mask(text, _tail_start(text, EXCERPT_TAIL), forward=True)
    head, tail = text[:head_end], text[tail_start:]
    left_out = utf8_size(text) - utf8_size(head) - utf8_size(tail)
    return head + excerpt_marker(left_out, stored_in) + tail
