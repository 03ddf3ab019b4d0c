"""The change record's walk trusts each folder listing once: attacks on what it lists and what it opens."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

from trialbook.masking import Masker
from trialbook.sandbox import _changes
from trialbook.sandbox._changes import record_changes


def _paths(record: Any) -> dict[str, str]:
    return {entry["path"]: entry["status"] for entry in record["files"]}


def test_nested_folders_are_walked_and_folder_links_are_listed_not_followed(tmp_path: Path) -> None:
    template = tmp_path / "t"
    (template / "a" / "b").mkdir(parents=True)
    (template / "a" / "b" / "same.txt").write_text("same\n")
    (template / "a" / "gone.txt").write_text("gone\n")
    work = tmp_path / "w"
    shutil.copytree(template, work, symlinks=True)
    (work / "a" / "gone.txt").unlink()
    (work / "a" / "b" / "c").mkdir()
    (work / "a" / "b" / "c" / "new.txt").write_text("new\n")
    (work / "a" / "empty").mkdir()  # a folder alone is no change
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("runner file\n")
    (work / "a" / "out").symlink_to(outside, target_is_directory=True)
    record: Any = record_changes(template, work, Masker())
    assert _paths(record) == {"a/gone.txt": "deleted", "a/b/c/new.txt": "created", "a/out": "created"}
    [link] = [entry for entry in record["files"] if entry["path"] == "a/out"]
    assert link["diff"].endswith(f"+-> {outside}\n\\ No newline at end of file\n")


def test_a_workdir_swapped_for_a_link_is_not_walked(tmp_path: Path) -> None:
    # The agent can replace its workdir with a link to any folder: the record must not list (or read,
    # or hash) what is there as the agent's work.
    template = tmp_path / "t"
    template.mkdir()
    (template / "kept.txt").write_text("kept\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("runner file\n")
    work = tmp_path / "w"
    work.symlink_to(outside, target_is_directory=True)
    assert _paths(record_changes(template, work, Masker())) == {"kept.txt": "deleted"}


def test_a_template_given_through_a_link_is_still_read(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "a.txt").write_text("a\n")
    template = tmp_path / "template"
    template.symlink_to(real, target_is_directory=True)
    work = tmp_path / "w"
    work.mkdir()
    (work / "a.txt").write_text("a\n")
    assert _paths(record_changes(template, work, Masker())) == {}


def test_a_file_swapped_for_a_fifo_after_the_listing_is_not_waited_on(tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    os.mkfifo(work / "pipe")
    seen: list[Any] = []
    done = threading.Event()

    def read() -> None:
        # As the listing said "a file" just before the agent's left-over swapped it for a FIFO.
        seen.append(_changes._content((str(work / "pipe"), "file")))
        done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(10):
        with open(work / "pipe", "wb"):
            pass
        pytest.fail("the record waited on a FIFO")
    assert seen == [(None, None)]


def test_a_file_swapped_for_a_link_after_the_listing_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("runner file\n")
    work = tmp_path / "w"
    work.mkdir()
    (work / "out.txt").symlink_to(outside)
    assert _changes._content((str(work / "out.txt"), "file")) == (None, None)
