"""Patterns match in linear time (RE2), agree with Python's ``re`` where both accept them, and refuse
the constructs that need backtracking with a reason the author can act on."""

from __future__ import annotations

import re
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.assertions import Pattern
from trialbook.assertions._regex import compile_regex

_ATOMS = st.sampled_from(["a", "b", "ab", ".", "[ab]", "[^a]", r"\d", r"\w", r"\s", "-", r"\.", "x"])


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    quantified = st.tuples(children, st.sampled_from(["*", "+", "?", "{1,3}", "{2}", "*?", "+?"]))
    return st.one_of(
        st.tuples(children, children).map("".join),
        st.tuples(children, children).map("|".join),
        children.map(lambda inner: f"({inner})"),
        children.map(lambda inner: f"(?:{inner})"),
        quantified.map(lambda pair: f"(?:{pair[0]}){pair[1]}"),
    )


_PATTERNS = st.recursive(_ATOMS, _combine, max_leaves=8).flatmap(
    lambda body: st.sampled_from([body, f"^{body}", f"{body}$", f"^{body}$"])
)
# No newline: RE2's $ is the end of the text, Python's also matches before a final newline.
_TEXT = st.text(alphabet="ab1 -.x\tä", max_size=60)


@settings(max_examples=400)
@given(pattern=_PATTERNS, text=_TEXT)
def test_matches_agree_with_python_re_wherever_both_accept_the_pattern(pattern: str, text: str) -> None:
    try:
        python = re.compile(pattern, re.ASCII)  # RE2's classes are ASCII, as the dialect says
    except re.error:
        return
    ours = compile_regex(pattern).search(text)
    theirs = python.search(text)
    assert (ours is None) == (theirs is None), (pattern, text)
    if ours is not None and theirs is not None:
        assert ours.start() == theirs.start(), (pattern, text)


def _finishes(pattern: Pattern, text: str, deadline_s: float) -> bool:
    done = threading.Event()

    def match() -> None:
        pattern.search_text(text)
        done.set()

    threading.Thread(target=match, daemon=True).start()
    return done.wait(deadline_s)


@pytest.mark.parametrize("pattern", ["/^(a+)+$/", "/(a|aa)+$/", "/(a*)*b$/", "/^(\\w+\\s?)*$/"])
def test_a_catastrophic_pattern_over_the_whole_output_limit_returns_long_before_a_minute(
    pattern: str,
) -> None:
    # Python's re needs about 2**n steps for n repeated characters here: 2**40 already runs for hours.
    # Over ten million characters RE2 returns in well under a second; the deadline only bounds the test.
    text = "a" * 10_000_000 + "!"
    assert _finishes(Pattern.parse(pattern), text, deadline_s=60)


@given(text=st.text(max_size=2000))
def test_the_worst_known_pattern_never_backtracks_on_any_text(text: str) -> None:
    assert _finishes(Pattern.parse("/^(a+)+$/"), text, deadline_s=30)


@pytest.mark.parametrize(
    ("written", "reason"),
    [
        ("/(\\w)\\1/", "a backreference"),
        ("/(?P<x>a)(?P=x)/", "a backreference"),
        ("/deploy(?= --prod)/", "a lookahead or lookbehind"),
        ("/(?<!no-)deploy/", "a lookahead or lookbehind"),
        ("/(?>a+)b/", "an atomic group or possessive quantifier"),
        ("/a++b/", "an atomic group or possessive quantifier"),
    ],
)
def test_constructs_that_need_backtracking_are_refused_with_the_alternative(
    written: str, reason: str
) -> None:
    with pytest.raises(ValueError, match="not a valid regular expression") as refused:
        Pattern.parse(written)
    message = str(refused.value)
    assert reason in message and "linear time" in message and "assert_that" in message


def test_python_flags_become_inline_flags_and_keep_their_cache_form() -> None:
    pattern = Pattern.of(re.compile("^deploy.$", re.IGNORECASE | re.DOTALL | re.MULTILINE))
    assert pattern.search_text("x\nDEPLOY\n\n") == 2
    assert pattern.to_json() == {"regex": "^deploy.$", "flags": int(re.I | re.S | re.M | re.U)}
    with pytest.raises(ValueError, match="not supported"):
        Pattern.of(re.compile("a", re.VERBOSE))


def test_a_refused_pattern_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="backreference"):
        Pattern.parse("/(a)\\1/")
    assert capfd.readouterr().err == ""
