"""A run's files are synced once, as a whole, before the run folder is renamed into place.

Nobody reads a staging folder before it is published whole, so inside it neither the fsyncs (one journal
commit each) nor the temp file and rename are paid per file: a new file is written in place, a file
written again is replaced atomically, and the folder is flushed with one ``syncfs`` when the run is
committed. Files outside a staging folder keep their temp file, rename and fsync.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.runner.local import run_local
from trialbook._util import fsutil
from trialbook.evidence import EvidenceWriteError, load_suite, publish_json

EVAL = (
    "prompt_text: write ok\n"
    "agents: [{{name: bench, script: 'echo ok > out.txt'}}]\n"
    "trials: {n}\n"
    "assert:\n  - file_contains: {{path: out.txt, pattern: ok}}\n"
)


def _run(tmp_path: Path, trials: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[Path], Path]:
    fsyncs = 0
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        nonlocal fsyncs
        fsyncs += 1
        real_fsync(fd)

    synced: list[Path] = []
    real_sync_folder = fsutil.sync_folder

    def recording(folder: Path) -> None:
        # What the flush covers at that moment: every trial's files must already be there.
        synced.extend(folder.glob("evals/ok/bench/trial-*/result.json"))
        real_sync_folder(folder)

    monkeypatch.setattr(os, "fsync", counting)
    monkeypatch.setattr("trialbook.runner._folder.sync_folder", recording)
    root = tmp_path / str(trials)
    eval_file = root / "evals" / "ok.eval.yaml"
    eval_file.parent.mkdir(parents=True)
    eval_file.write_text(EVAL.format(n=trials))
    report = run_local(eval_file, root / "results")
    assert report.suite_path is not None
    monkeypatch.undo()
    return fsyncs, synced, report.suite_path


def _count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real_fsync = os.fsync

    def counting(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting)
    return calls


def test_fsyncs_do_not_grow_with_the_trials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, _, _ = _run(tmp_path, 1, monkeypatch)
    six, synced, suite = _run(tmp_path, 6, monkeypatch)
    assert six == one, f"{one} fsyncs for 1 trial, {six} for 6: trial files are synced one by one"
    # The one flush ran with all six trials' transcripts in the staging folder, before the rename.
    assert len(synced) == 6
    assert all(".partial" in str(path) for path in synced)
    report = load_suite(suite)
    assert sum(len(test.executions) for test in report.tests) == 6
    results = sorted(suite.parent.glob("evals/ok/bench/trial-*/result.json"))
    assert len(results) == 6
    assert not list(suite.parent.rglob("*.tmp"))


def test_a_write_outside_a_staging_folder_fsyncs_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _count_fsyncs(monkeypatch)
    publish_json(tmp_path / "a.json", {"x": 1})
    fsutil.atomic_write_text(tmp_path / "b.txt", "b")
    assert len(calls) == 4  # each file and its folder
    staged = tmp_path / "staged"
    staged.mkdir()
    fsutil.sync_later(staged)
    try:
        publish_json(staged / "a.json", {"x": 1})
        fsutil.atomic_write_text(staged / "sub" / "b.txt", "b")
        assert len(calls) == 4
        # A sibling whose name starts like the staged folder is not inside it.
        fsutil.atomic_write_text(tmp_path / "staged-not" / "c.txt", "c")
        assert len(calls) == 6
    finally:
        fsutil.sync_later(staged, False)
    fsutil.atomic_write_text(staged / "d.txt", "d")
    assert len(calls) == 8
    assert (staged / "sub" / "b.txt").read_text() == "b"


def test_sync_folder_without_syncfs_fsyncs_every_file_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "one").write_text("1")
    (tmp_path / "a" / "b" / "two").write_text("2")
    monkeypatch.setattr(fsutil, "_syncfs", lambda folder: False)  # as on macOS
    calls = _count_fsyncs(monkeypatch)
    fsutil.sync_folder(tmp_path)
    assert len(calls) == 5  # two files, three folders


@pytest.fixture
def staged(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "staged"
    folder.mkdir()
    fsutil.sync_later(folder)
    yield folder
    fsutil.sync_later(folder, False)


def test_a_new_file_in_a_staging_folder_is_written_in_place(
    staged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    renames: list[str] = []
    real_replace = os.replace

    def recording(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        renames.append(os.fspath(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", recording)
    publish_json(staged / "a.json", {"x": 1})
    fsutil.atomic_write_text(staged / "sub" / "b.txt", "b")
    assert renames == []
    assert json.loads((staged / "a.json").read_text()) == {"x": 1}
    assert (staged / "sub" / "b.txt").read_text() == "b"
    # Written again: replaced whole through a temp file, never truncated in place.
    publish_json(staged / "a.json", {"x": 2})
    fsutil.atomic_write_text(staged / "sub" / "b.txt", "c")
    assert renames == [str(staged / "a.json"), str(staged / "sub" / "b.txt")]
    assert json.loads((staged / "a.json").read_text()) == {"x": 2}
    assert sorted(p.name for p in staged.rglob("*")) == ["a.json", "b.txt", "sub"]


def test_a_write_that_fails_half_way_in_a_staging_folder_leaves_no_file(
    staged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk after the first bytes: the half-written file is removed, not left to be published."""
    real_write = os.write
    calls = 0

    def filling(fd: int, data: bytes | memoryview) -> int:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, bytes(data)[:10])

    monkeypatch.setattr(os, "write", filling)
    with pytest.raises(EvidenceWriteError, match="No space left"):
        publish_json(staged / "a.json", {"x": "y" * 100})
    with pytest.raises(OSError, match="No space left"):
        fsutil.atomic_write_bytes(staged / "b.bin", b"z" * 100)
    monkeypatch.undo()
    assert list(staged.iterdir()) == []


def test_a_value_that_is_not_json_leaves_no_file_in_a_staging_folder(staged: Path) -> None:
    with pytest.raises(EvidenceWriteError, match="could not save"):
        publish_json(staged / "a.json", {"x": float("nan")})
    assert list(staged.iterdir()) == []
