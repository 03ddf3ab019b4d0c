"""Publishing a JSON file: complete or not at all, readable like any other file, nothing left behind."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from trialbook.evidence import EvidenceSchemaError, EvidenceWriteError, publish_json, read_json


def test_publish_writes_utf8_json_with_a_trailing_newline(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    publish_json(target, {"name": "café", "empty": "", "none": None})
    text = target.read_text(encoding="utf-8")
    assert text.endswith("}\n")
    assert "café" in text
    assert json.loads(text) == {"name": "café", "empty": "", "none": None}
    assert os.listdir(tmp_path) == ["result.json"]


def test_published_files_follow_the_umask_like_ordinary_files(tmp_path: Path) -> None:
    previous = os.umask(0o027)
    try:
        publish_json(tmp_path / "a.json", {})
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a.json").stat().st_mode) == 0o640


def test_text_that_is_not_utf8_is_a_clear_error_and_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "changes.json"
    publish_json(target, {"n": 1})
    name = os.fsdecode(b"\xff")  # a name as a listing decodes it: a lone surrogate, not text
    with pytest.raises(EvidenceWriteError, match=r"could not save .*changes\.json.*unchanged"):
        publish_json(target, {"path": name})
    assert read_json(target) == {"n": 1}
    assert os.listdir(tmp_path) == ["changes.json"]


def test_publish_accepts_a_plain_string_path(tmp_path: Path) -> None:
    publish_json(str(tmp_path / "b.json"), {"n": 1})
    assert read_json(str(tmp_path / "b.json")) == {"n": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": 1, "a": 2}', "the key 'a' appears twice"),
        ('{"a": Infinity}', "Infinity is not a JSON number"),
        ('{"a": -Infinity}', "-Infinity is not a JSON number"),
        ('{"a": 1', "not valid JSON at line 1, column 8"),
        ("", "not valid JSON at line 1, column 1"),
    ],
)
def test_read_json_is_strict(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(EvidenceSchemaError, match=message) as caught:
        read_json(path)
    assert caught.value.file == str(path)
