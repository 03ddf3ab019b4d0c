"""Eval ids become portable history file paths and decode back exactly."""

from __future__ import annotations

import pytest

from trialbook.errors import UsageError
from trialbook.history._paths import id_to_parts, parts_to_id


@pytest.mark.parametrize(
    ("eval_id", "parts"),
    [
        ("demo", ("demo.jsonl",)),
        ("setup/neon", ("setup", "neon.jsonl")),
        ("a/b c", ("a", "b%20c.jsonl")),
        ("x:y%z", ("x%3Ay%25z.jsonl",)),
        ("..", ("%2E%2E.jsonl",)),
        ("x.jsonl/y", ("x%2Ejsonl", "y.jsonl")),
        ("ünï", ("%C3%BCn%C3%AF.jsonl",)),
    ],
)
def test_ids_encode_per_component_and_round_trip(eval_id: str, parts: tuple[str, ...]) -> None:
    assert id_to_parts(eval_id) == parts
    assert parts_to_id(parts) == eval_id


def test_a_folder_never_collides_with_a_file() -> None:
    assert id_to_parts("x")[0] != id_to_parts("x.jsonl/y")[0]


@pytest.mark.parametrize("bad", ["", "a//b", "/a", "a/"])
def test_empty_components_are_refused(bad: str) -> None:
    with pytest.raises(UsageError):
        id_to_parts(bad)


def test_non_history_files_have_no_id() -> None:
    assert parts_to_id(("README.md",)) is None
    assert parts_to_id((".jsonl",)) is None
    assert parts_to_id(()) is None
