"""Rebuilding a final sandbox from its template and its change record gives back exactly the agent's tree."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trialbook.masking import Masker
from trialbook.sandbox._changes import MAX_CONTENT_BYTES, record_changes
from trialbook.sandbox._rebuild import apply_changes


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under ``root``: folders with their mode, files with content and mode, links' targets."""
    found: dict[str, tuple[Any, ...]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir",)
            else:
                found[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def round_trip(template: Path, work: Path, rebuilt: Path, masker: Masker | None = None) -> Any:
    """Record ``work`` against ``template``, write and read the record as JSON, apply it to a copy."""
    record = json.loads(json.dumps(record_changes(template, work, masker or Masker())))
    shutil.copytree(template, rebuilt, symlinks=True)
    return record, apply_changes(rebuilt, record)


def test_deletions_links_modes_and_folders_come_back(tmp_path: Path) -> None:
    template = tmp_path / "t"
    (template / "src" / "old").mkdir(parents=True)
    (template / "src" / "old" / "a.txt").write_text("old\n")
    (template / "keep.txt").write_text("same\n")
    (template / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (template / "gone.txt").write_text("bye\n")
    (template / "swap").write_text("a file, to become a folder\n")
    work = tmp_path / "w"
    shutil.copytree(template, work, symlinks=True)
    (work / "gone.txt").unlink()
    shutil.rmtree(work / "src" / "old")
    (work / "run.sh").chmod(0o755)  # a mode change alone
    (work / "link").symlink_to("keep.txt")
    (work / "dangling").symlink_to("../outside/nowhere")
    (work / "empty" / "deep").mkdir(parents=True)
    (work / "blob.bin").write_bytes(bytes(range(256)) * 3)
    (work / "swap").unlink()
    (work / "swap").mkdir()
    (work / "swap" / "inner.txt").write_text("inside\n")
    (work / "keep.txt").write_text("edited\n")

    record, rebuilt = round_trip(template, work, tmp_path / "r")

    assert rebuilt.complete, (rebuilt.problems, rebuilt.missing)
    assert snapshot(tmp_path / "r") == snapshot(work)
    by_path = {entry["path"]: entry for entry in record["files"]}
    assert by_path["run.sh"]["status"] == "modified" and by_path["run.sh"]["diff"] == ""
    assert by_path["run.sh"]["rebuild"]["mode"] == "0755"
    assert by_path["link"]["rebuild"] == {"kind": "link", "mode": None, "missing": None, "target": "keep.txt"}


def test_a_secret_in_a_file_is_never_kept_and_the_file_is_missing(tmp_path: Path) -> None:
    secret = "s3cr3t-value-123"
    template = tmp_path / "t"
    template.mkdir()
    work = tmp_path / "w"
    work.mkdir()
    (work / ".env").write_text(f"TOKEN={secret}\n")
    (work / "ok.txt").write_text("fine\n")
    (work / secret).write_text("a secret name\n")
    (work / "to-secret").symlink_to(secret)

    record, rebuilt = round_trip(template, work, tmp_path / "r", Masker([secret]))

    assert secret not in json.dumps(record)
    assert rebuilt.missing[".env"] == "its content held a secret, kept masked"
    assert "to-secret" in rebuilt.missing
    assert any("name held a secret" in problem for problem in rebuilt.problems)
    assert (tmp_path / "r" / "ok.txt").read_text() == "fine\n"


def test_content_past_the_limit_is_missing_not_cut(tmp_path: Path) -> None:
    template = tmp_path / "t"
    template.mkdir()
    work = tmp_path / "w"
    work.mkdir()
    third = MAX_CONTENT_BYTES // 3 + 1  # each small enough to diff, together past the trial's limit
    for name in "abc":
        (work / f"{name}.bin").write_bytes(name.encode() * third)

    _, rebuilt = round_trip(template, work, tmp_path / "r")

    assert (tmp_path / "r" / "b.bin").read_bytes() == b"b" * third
    assert "content limit" in rebuilt.missing["c.bin"]
    assert not (tmp_path / "r" / "c.bin").exists()


def test_a_hostile_record_writes_nothing_outside(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (work / "out").symlink_to(outside)
    sha = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"  # of b"hello"
    good = {"kind": "file", "mode": "0644", "missing": None, "text": "hello"}

    def entry(path: str, **final: Any) -> dict[str, Any]:
        return {"path": path, "after": {"size": 5, "sha256": sha}, "rebuild": {**good, **final}}

    record = {
        "files": [
            entry("../escape.txt"),
        ],
        "rebuild": {"complete": True, "problems": [], "folders_created": [], "folders_deleted": []},
    }
    assert apply_changes(work, record).problems
    record["files"] = [entry("out/through-link.txt"), entry("tampered.txt", text="HELLO"), entry("ok.txt")]
    rebuilt = apply_changes(work, record)
    assert set(rebuilt.missing) == {"out/through-link.txt", "tampered.txt"}
    assert "hash" in rebuilt.missing["tampered.txt"]
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "escape.txt").exists()
    assert (work / "ok.txt").read_text() == "hello"
    assert apply_changes(work, {"files": []}).problems  # a record from before rebuilding existed


_names = st.sampled_from(["a", "b", "c.txt", "d"])
_paths = st.lists(_names, min_size=1, max_size=3).map("/".join)
_entry = st.one_of(
    st.tuples(st.just("file"), st.binary(max_size=40), st.sampled_from([0o644, 0o600, 0o755])),
    st.tuples(st.just("link"), st.sampled_from(["a", "../x", "c.txt/b", "/etc/passwd"])),
    st.tuples(st.just("dir")),
)
_trees = st.dictionaries(_paths, _entry, max_size=8)


def _build(root: Path, tree: dict[str, tuple[Any, ...]]) -> None:
    root.mkdir()
    for rel, spec in sorted(tree.items()):
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if spec[0] == "file":
                path.write_bytes(spec[1])
                path.chmod(spec[2])
            elif spec[0] == "link":
                path.symlink_to(spec[1])
            else:
                path.mkdir()
        except OSError:
            continue  # a path under a file or a link: the tree simply lacks it


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=_trees, after=_trees)
def test_any_tree_comes_back_from_any_template(tmp_path_factory: Any, before: Any, after: Any) -> None:
    base = tmp_path_factory.mktemp("trees")
    _build(base / "t", before)
    _build(base / "w", after)
    _, rebuilt = round_trip(base / "t", base / "w", base / "r")
    assert rebuilt.complete, (rebuilt.problems, rebuilt.missing)
    assert snapshot(base / "r") == snapshot(base / "w")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({}, {"a": ("file", b"-> ", 0o644)}),
        ({"a": ("file", b"-> x", 0o644)}, {"a": ("link", "x")}),
        ({"a": ("link", "x")}, {"a": ("file", b"-> x", 0o644)}),
    ],
    ids=["file-reading-like-a-link", "file-becomes-link", "link-becomes-file"],
)
def test_a_file_that_reads_like_a_link_is_a_file(tmp_path: Path, before: Any, after: Any) -> None:
    # Changes once told a link from a file by a "-> " prefix of the content, so a file that began with
    # it was rebuilt as a link, and a file swapped for a link to what it read was no change at all.
    _build(tmp_path / "t", before)
    _build(tmp_path / "w", after)
    record, rebuilt = round_trip(tmp_path / "t", tmp_path / "w", tmp_path / "r")
    assert record["counts"] == {"created": 0 if before else 1, "modified": 1 if before else 0, "deleted": 0}
    assert rebuilt.complete, (rebuilt.problems, rebuilt.missing)
    assert snapshot(tmp_path / "r") == snapshot(tmp_path / "w")


def test_the_viewer_shows_the_diff_not_the_content_kept_for_rebuilding(tmp_path: Path) -> None:
    from trialbook.report.viewer_load import _changes

    template = tmp_path / "t"
    template.mkdir()
    work = tmp_path / "w"
    work.mkdir()
    (work / "big.txt").write_text("kept whole for a rebuild\n" * 100)
    (tmp_path / "changes.json").write_text(json.dumps(record_changes(template, work, Masker())))
    shown: Any = _changes(tmp_path / "changes.json")
    [entry] = shown["files"]
    assert "text" not in entry["rebuild"] and entry["rebuild"]["kind"] == "file"
    assert "+kept whole for a rebuild" in entry["diff"]
