"""A history line built to crash the reader is one invalid line: reported once, skipped, never fatal.

Real commands over a ``--history-dir`` holding a recorded line and, after it, a line of thousands of
nested brackets (``json.loads`` alone raises ``RecursionError`` on it): ``eval``, ``history`` and
``list`` all finish, the good line still serves, and the bad one is named with its line number.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook.evidence._bounded import MAX_JSON_DEPTH, loads_bounded

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]

EVAL = "prompt_text: hi\nagents: [{name: s, script: 'true'}]\nnegative_control: false\n"


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deeply_nested_line_is_skipped_with_one_warning_and_every_command_goes_on(
    invoke: Invoke, tmp_path: Path, depth: int
) -> None:
    write(tmp_path / "evals/e.eval.yaml", EVAL)
    first = invoke("eval", "evals", "--history-dir", "hist")
    assert first.exit_code == 0, first.output
    history = tmp_path / "hist/e.jsonl"
    with history.open("a") as handle:
        handle.write("[" * depth + "]" * depth + "\n")
    for args in (("eval", "evals", "--history-dir", "hist"), ("history", "--history-dir", "hist")):
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.output
        warnings = [line for line in result.output.splitlines() if "e.jsonl:2" in line]
        assert len(warnings) == 1 and "nested deeper than 64 levels" in warnings[0], result.output
    listed = invoke("list", "evals", "--history-dir", "hist")
    assert listed.exit_code == 0 and "Traceback" not in listed.output, listed.output
    # The recorded line before it still serves as the cache.
    assert "cached" in invoke("eval", "evals", "--history-dir", "hist", "--dry-run").output


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab[]{}"\\', max_size=5),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=20,
)


def _depth(value: object) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(item) for item in value.values()), default=0)
    return 0


@given(_JSON)
def test_the_bound_accepts_what_json_does_within_it_brackets_in_strings_included(value: object) -> None:
    text = json.dumps(value)
    if _depth(value) <= MAX_JSON_DEPTH:
        assert loads_bounded(text) == value
    else:
        with pytest.raises(ValueError, match="nested deeper"):
            loads_bounded(text)


def test_one_level_past_the_bound_is_refused_and_the_bound_itself_is_not() -> None:
    at = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert _depth(loads_bounded(at)) == MAX_JSON_DEPTH
    with pytest.raises(ValueError, match="nested deeper than 64"):
        loads_bounded("[" + at + "]")
    assert loads_bounded('["[[[[", {"k": "{{{"}]') == ["[[[[", {"k": "{{{"}]
