"""The sandbox change record: what an agent created, modified and deleted, bounded and masked."""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.masking import Masker
from trialbook.sandbox import _changes
from trialbook.sandbox._changes import MAX_DIFF_BYTES, record_changes


def tree(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def changes(template: Path | None, work: Path, masker: Masker) -> Any:
    """The record as the untyped JSON it is written as."""
    return record_changes(template, work, masker)


def by_path(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {entry["path"]: entry for entry in record["files"]}


def test_created_modified_deleted_and_unchanged(tmp_path: Path) -> None:
    template = tree(tmp_path / "t", {"keep.txt": b"same\n", "edit.txt": b"a\nb\n", "gone.txt": b"bye\n"})
    work = tree(tmp_path / "w", {"keep.txt": b"same\n", "edit.txt": b"a\nc\n", "new/deep.txt": b"hi\n"})
    record = changes(template, work, Masker())
    entries = by_path(record)
    assert set(entries) == {"edit.txt", "gone.txt", "new/deep.txt"}
    assert record["counts"] == {"created": 1, "modified": 1, "deleted": 1}
    assert entries["edit.txt"]["status"] == "modified"
    assert "-b\n+c\n" in entries["edit.txt"]["diff"]
    assert entries["gone.txt"]["after"] is None
    assert entries["new/deep.txt"]["before"] is None
    assert entries["new/deep.txt"]["after"] == {"size": 3, "sha256": hashlib.sha256(b"hi\n").hexdigest()}
    json.dumps(record)  # plain JSON


def test_no_template_means_everything_is_created(tmp_path: Path) -> None:
    work = tree(tmp_path / "w", {"a.txt": b"x"})
    record = changes(None, work, Masker())
    [entry] = record["files"]
    assert entry["status"] == "created"
    assert entry["diff"].endswith("+x\n\\ No newline at end of file\n")


def test_binary_files_are_size_and_hash_only(tmp_path: Path) -> None:
    blob = bytes(range(256)) * 4
    template = tree(tmp_path / "t", {"img.bin": blob})
    work = tree(tmp_path / "w", {"img.bin": blob[::-1], "latin1.txt": "café".encode("latin-1")})
    entries = by_path(changes(template, work, Masker()))
    assert entries["img.bin"]["binary"] is True
    assert "diff" not in entries["img.bin"]
    assert entries["img.bin"]["before"]["size"] == entries["img.bin"]["after"]["size"] == 1024
    assert entries["latin1.txt"]["binary"] is True


def test_a_symlink_is_compared_by_target_and_never_followed(tmp_path: Path) -> None:
    outside = tree(tmp_path / "outside", {"secret.txt": b"runner's file\n"})
    work = tree(tmp_path / "w", {})
    (work / "link").symlink_to(outside / "secret.txt")
    (work / "dirlink").symlink_to(outside, target_is_directory=True)
    record = changes(tree(tmp_path / "t", {}), work, Masker())
    entries = by_path(record)
    assert set(entries) == {"link", "dirlink"}
    assert "runner's file" not in json.dumps(record)
    assert str(outside / "secret.txt") in entries["link"]["diff"]


def test_secrets_are_masked_before_diff_hash_and_cut(tmp_path: Path) -> None:
    secret = "tok-" + "Z" * 40
    work = tree(
        tmp_path / "w", {f"{secret}.txt": secret.encode() + b"\n", "blob.bin": b"\0" + secret.encode()}
    )
    record = changes(None, work, Masker([secret]))
    text = json.dumps(record)
    assert secret not in text
    assert hashlib.sha256(secret.encode() + b"\n").hexdigest() not in text
    assert hashlib.sha256(b"\0" + secret.encode()).hexdigest() not in text
    assert "***.txt" in by_path(record)


def test_a_name_that_is_not_utf8_is_masked_before_it_is_escaped(tmp_path: Path) -> None:
    # A secret read from an environment that is not UTF-8 holds the same undecodable byte as the name.
    secret = os.fsdecode(b"tok\xffen-0123456789")
    work = tmp_path / "w"
    work.mkdir()
    (work / os.fsdecode(b"key-tok\xffen-0123456789.txt")).write_bytes(b"x\n")
    (work / os.fsdecode(b"plain-\xfe.txt")).write_bytes(b"y\n")
    record = changes(None, work, Masker([secret]))
    text = json.dumps(record, ensure_ascii=False)
    assert "0123456789" not in text
    assert sorted(by_path(record)) == ["key-***.txt", "plain-\\xfe.txt"]


def test_a_long_diff_is_cut_and_says_so(tmp_path: Path) -> None:
    work = tree(tmp_path / "w", {"big.txt": "é line\n".encode() * 40_000})
    [entry] = changes(None, work, Masker())["files"]
    assert entry["diff_truncated"] is True
    assert len(entry["diff"].encode()) <= MAX_DIFF_BYTES
    entry["diff"].encode("utf-8")  # never cut inside a character


def test_entries_and_total_diff_are_bounded(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(_changes, "MAX_ENTRIES", 5)
    monkeypatch.setattr(_changes, "MAX_TOTAL_DIFF_BYTES", 300)
    work = tree(tmp_path / "w", {f"f{i:02d}.txt": b"content line\n" * 10 for i in range(12)})
    record = changes(None, work, Masker())
    assert len(record["files"]) == 5
    assert record["omitted"] == 7
    assert record["counts"]["created"] == 12
    assert sum(len(e["diff"].encode()) for e in record["files"]) <= 300
    assert record["files"][-1]["diff_truncated"] is True


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    work = tree(tmp_path / "w", {"plain.txt": b"x"})
    os.mkfifo(work / "pipe")  # opening it for reading would block until a writer comes
    record = changes(None, work, Masker())
    assert {e["path"] for e in record["files"]} == {"plain.txt"}


def test_a_large_file_is_hashed_from_disk_not_diffed(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(_changes, "MAX_TEXT_BYTES", 1000)
    data = b"text line\n" * 500
    template = tree(tmp_path / "t", {"big.log": data})
    work = tree(tmp_path / "w", {"big.log": data + b"more\n"})
    [entry] = changes(template, work, Masker())["files"]
    assert entry["binary"] is True
    assert entry["after"] == {"size": len(data) + 5, "sha256": hashlib.sha256(data + b"more\n").hexdigest()}


names = st.text(alphabet="abcxyz", min_size=1, max_size=4)
contents = st.binary(max_size=40)


@settings(max_examples=40, deadline=None)
@given(
    before=st.dictionaries(names, contents, max_size=5), after=st.dictionaries(names, contents, max_size=5)
)
def test_the_record_matches_the_two_trees(
    tmp_path_factory: Any, before: dict[str, bytes], after: dict[str, bytes]
) -> None:
    root = tmp_path_factory.mktemp("prop")
    record = changes(tree(root / "t", before), tree(root / "w", after), Masker())
    expected = {
        name: ("created" if name not in before else "deleted" if name not in after else "modified")
        for name in before.keys() | after.keys()
        if before.get(name) != after.get(name)
    }
    assert {e["path"]: e["status"] for e in record["files"]} == expected


_LINE = st.text(alphabet="ab \t\r\\+-@", max_size=6).map(lambda text: text + "\n") | st.text(max_size=4)
_LINES = st.lists(_LINE, max_size=6)


@given(before=_LINES, after=_LINES, name=st.text(max_size=8))
def test_every_diff_is_difflibs_own_text_whether_or_not_a_side_is_empty(
    before: list[str], after: list[str], name: str
) -> None:
    # A created or deleted file skips difflib's matcher: the text must still be exactly difflib's, for
    # one line and many, with and without a final newline, for files emptied or filled.
    sides = [(before, after), ([], after), (before, []), ([], [])]
    for old, new in sides:
        expected = list(difflib.unified_diff(old, new, f"a/{name}", f"b/{name}", n=3))
        assert list(_changes._diff_lines(old, new, f"a/{name}", f"b/{name}")) == expected
