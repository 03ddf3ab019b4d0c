"""A disk that reports a write error while a run is flushed: the run is kept, recorded and reported.

The errors come from the kernel's ``syncfs``/``fsync`` (``EIO`` after a failed write-back), which no
disk of a test machine produces on demand, so they are injected at the one call each makes. Nothing
is lost: the run folder is put in place and recorded in history all the same (its files read back whole
until the machine goes down), and the run says so and exits 1.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path

import jsonschema
import pytest

from trialbook._util import fsutil
from trialbook.evidence import load_suite

from .conftest import Invoke, invoke, write
from .test_durable_writes import _count_fsyncs

__all__ = ["invoke"]

SCHEMA = Path(__file__).resolve().parents[2] / "docs/schemas/run.schema.json"


def _eval(tmp_path: Path) -> None:
    write(tmp_path / "evals/e.eval.yaml", "prompt_text: hi\nagents: [{name: s, script: 'echo ok'}]\n")


def _syncfs_reports(monkeypatch: pytest.MonkeyPatch, code: int | None) -> None:
    monkeypatch.setattr(fsutil, "_syncfs_errno", lambda fd: code)


def _fsync_fails_on(monkeypatch: pytest.MonkeyPatch, folders: bool, files: bool) -> None:
    real_fsync = os.fsync

    def failing(fd: int) -> None:
        is_folder = stat.S_ISDIR(os.fstat(fd).st_mode)
        if (folders and is_folder) or (files and not is_folder):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing)


def test_syncfs_reporting_a_write_error_is_raised_not_taken_for_a_missing_syncfs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").write_text("1")
    _syncfs_reports(monkeypatch, errno.EIO)
    with pytest.raises(fsutil.NotDurableError, match="Input/output error") as caught:
        fsutil.sync_folder(tmp_path)
    assert caught.value.errno == errno.EIO
    # Where syncfs is missing, every file and folder is fsynced instead: nothing is raised.
    fsyncs = _count_fsyncs(monkeypatch)
    for missing in (None, errno.ENOSYS):
        fsyncs.clear()
        _syncfs_reports(monkeypatch, missing)
        fsutil.sync_folder(tmp_path)
        assert len(fsyncs) == 2  # the file and its folder


@pytest.mark.parametrize(("folders", "files"), [(False, True), (True, False)])
def test_without_syncfs_a_write_error_of_one_file_or_folder_is_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, folders: bool, files: bool
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.json").write_text("{}")
    _syncfs_reports(monkeypatch, None)
    _fsync_fails_on(monkeypatch, folders=folders, files=files)
    with pytest.raises(fsutil.NotDurableError, match="Input/output error"):
        fsutil.sync_folder(tmp_path)

    # A filesystem that cannot sync at all (EINVAL) is no write error.
    def cannot_sync(fd: int) -> None:
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(os, "fsync", cannot_sync)
    fsutil.sync_folder(tmp_path)


@pytest.mark.parametrize("where", ["the flush", "the rename"])
def test_a_run_whose_flush_fails_is_kept_recorded_and_exits_1(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    _eval(tmp_path)
    # A first run makes the runs folder and its marker, whose writes fsync that folder too.
    assert invoke("eval", "--history-dir", "hist").exit_code == 0
    with monkeypatch.context() as failing:  # only the disk's faults: the fixture's chdir stays
        if where == "the flush":
            _syncfs_reports(failing, errno.EIO)
        else:  # the flush succeeds; the fsyncs of the folder the run is renamed into (and `latest`) fail
            _syncfs_reports(failing, 0)
            _fsync_fails_on(failing, folders=True, files=False)
        result = invoke("eval", "--history-dir", "hist", "--force")
    assert result.exit_code == 1, result.output
    runs = tmp_path / ".trialbook/runs"
    latest = runs / "latest"
    assert latest.is_symlink()
    folder = runs / os.readlink(latest)
    assert f"error: the disk reported an error while flushing {folder} (Input/output error)" in result.stderr
    assert "may not survive a crash" in result.stderr
    assert "Traceback" not in result.output
    # Nothing lost: the whole run is in place, nothing half-published is left, and history has its line.
    (test,) = load_suite(folder / "suite.json").tests
    assert [execution.passed for execution in test.executions] == [True]
    assert (folder / "evals/e/s/trial-1/result.json").is_file()
    assert not [p.name for p in runs.iterdir() if p.name.endswith((".partial", ".old"))]
    first, second = (json.loads(line) for line in (tmp_path / "hist/e.jsonl").read_text().splitlines())
    assert second["verdict"] == "pass" and second["run_id"] != first["run_id"]
    # The next run, on a healthy disk, is clean again.
    again = invoke("eval", "--force")
    assert again.exit_code == 0, again.output
    assert "error:" not in again.stderr


def test_the_json_document_says_why_the_run_may_not_be_on_disk(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _eval(tmp_path)
    with monkeypatch.context() as failing:
        _syncfs_reports(failing, errno.ENOSPC)
        result = invoke("eval", "--json", "--results-dir", "out")
    assert result.exit_code == 1, result.output
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads(SCHEMA.read_text()))
    assert document["exit_code"] == 1
    assert document["folder"] == str((tmp_path / "out").resolve())
    assert "No space left on device" in document["durability_error"]
    assert (tmp_path / "out/suite.json").is_file()
    healthy = json.loads(invoke("eval", "--json", "--results-dir", "out", "--force").stdout)
    assert healthy["durability_error"] is None
    jsonschema.validate(healthy, json.loads(SCHEMA.read_text()))
