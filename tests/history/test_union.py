"""The per-file union rules: prefix, both extend the base, no base."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trialbook.history import union_lines


def _file(*lines: str) -> bytes:
    return "".join(f"{text}\n" for text in lines).encode()


def test_a_prefix_side_yields_the_longer_side() -> None:
    assert union_lines(None, _file("a"), _file("a", "b")) == _file("a", "b")
    assert union_lines(None, _file("a", "b", "c"), _file("a")) == _file("a", "b", "c")


def test_both_extending_the_base_gives_theirs_then_our_new_lines() -> None:
    base = _file("a", "b")
    ours, theirs = _file("a", "b", "o1", "o2"), _file("a", "b", "t1")
    assert union_lines(base, ours, theirs) == _file("a", "b", "t1", "o1", "o2")


def test_without_a_base_every_line_of_both_sides_is_kept_once() -> None:
    ours, theirs = _file("x", "shared", "o"), _file("t", "shared")
    assert union_lines(None, ours, theirs) == _file("t", "shared", "x", "o")


def test_a_base_neither_side_extends_falls_back_to_set_union() -> None:
    assert union_lines(_file("gone"), _file("o"), _file("t")) == _file("t", "o")


def test_one_side_missing_and_a_missing_newline() -> None:
    assert union_lines(None, None, b"t") == _file("t")
    assert union_lines(None, _file("o"), None) == _file("o")
    assert union_lines(_file("a"), b"a\no", b"a\nt\n") == _file("a", "t", "o")


def test_a_line_theirs_already_has_is_not_doubled_even_after_a_rewritten_history() -> None:
    base = _file("a")
    assert union_lines(base, _file("a", "x", "y"), _file("a", "y", "z")) == _file("a", "y", "z", "x")


_LINES = st.lists(st.text("abcdef", min_size=1, max_size=4), unique=True, max_size=8)


@given(base=_LINES, ours_new=_LINES, theirs_new=_LINES, with_base=st.booleans())
def test_union_keeps_every_line_exactly_once(
    base: list[str], ours_new: list[str], theirs_new: list[str], with_base: bool
) -> None:
    ours = base + [x for x in ours_new if x not in base]
    theirs = base + [x for x in theirs_new if x not in base]
    merged = union_lines(_file(*base) if with_base else None, _file(*ours), _file(*theirs))
    result = merged.decode().splitlines()
    assert sorted(result) == sorted(set(ours) | set(theirs))
    assert result[: len(theirs)] == theirs  # the remote's order is never disturbed
