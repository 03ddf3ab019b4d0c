"""A run's files are synced once, as a whole, before the run folder is renamed into place.

Each trial's files are still written atomically (temp file, rename), so a reader or a ``kill -9`` never
sees part of one; what changes is that the fsyncs (one journal commit each) are not paid per file: the
staging folder is flushed with one ``syncfs`` when the run is committed. Files outside a staging folder
keep their own fsync.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trialbook import fsutil
from trialbook.evidence import load_suite, publish_json
from trialbook.runner import RunOptions, run

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
    report = run(
        RunOptions(
            paths=(eval_file,),
            unsafe_local=True,
            results_dir=root / "results",
            environ={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        )
    )
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
