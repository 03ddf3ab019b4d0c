"""A write killed with SIGKILL between its temp file and its rename: the old file stays whole, and the
temp file left beside it carries its owner, so the next run's sweep (and ``trialbook clean``) removes it.

Every writer of a file a reader may find goes through the one durable write in ``trialbook._util.fsutil``;
each is killed here at its worst moment, in a real child process, by making ``os.replace`` send the
child a ``SIGKILL``.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from trialbook._util import fsutil
from trialbook._util.owner import start_time
from trialbook.evidence import EvidenceWriteError, publish_json
from trialbook.runner._runs import set_latest
from trialbook.sandbox.leftovers import sweep

ROOT = Path(__file__).resolve().parents[2]

# Each writer: how the folder looks before, the write that is killed, and what the target then holds.
WRITERS = {
    "atomic_write_bytes": (
        "(folder / 'notes.txt').write_text('old whole')",
        "from trialbook._util.fsutil import atomic_write_text\n"
        "atomic_write_text(folder / 'notes.txt', 'new ' * 100_000)",
        "notes.txt",
    ),
    "publish_json": (
        "(folder / 'suite.json').write_text('{\"old\": true}\\n')",
        "from trialbook.evidence import publish_json\n"
        "publish_json(folder / 'suite.json', {'new': 'x' * 100_000})",
        "suite.json",
    ),
    "set_latest": (
        "(folder / 'run-a').mkdir(); (folder / 'run-b').mkdir(); os.symlink('run-a', folder / 'latest')",
        "from trialbook.runner._runs import set_latest\nset_latest(folder, folder / 'run-b')",
        "latest",
    ),
    "copilot events": (
        "(folder / 'events.jsonl').write_text('{\"old\": true}\\n')",
        "from trialbook.agents.copilot._events import EventMapper\n"
        "from trialbook.agents.copilot._result import write_events\n"
        "mapper = EventMapper()\nmapper.events.extend({'n': n} for n in range(1000))\n"
        "write_events(folder / 'events.jsonl', mapper, [])",
        "events.jsonl",
    ),
}


def _state(path: Path) -> str:
    return f"-> {os.readlink(path)}" if path.is_symlink() else path.read_text()


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_write_killed_before_its_rename_keeps_the_old_file_and_is_swept(
    tmp_path: Path, writer: str
) -> None:
    before, write, name = WRITERS[writer]
    folder = tmp_path / "out"
    folder.mkdir()
    prelude = f"import os, signal\nfrom pathlib import Path\nfolder = Path({str(folder)!r})\n"
    subprocess.run([sys.executable, "-c", prelude + before], cwd=ROOT, check=True, timeout=60)
    kill_at_rename = "os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)\n"
    script = prelude + kill_at_rename + write
    old, entries = _state(folder / name), sorted(os.listdir(folder))
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, timeout=60)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()

    assert _state(folder / name) == old  # never half-written, never pointing at nothing
    left = sorted(set(os.listdir(folder)) - set(entries))
    assert len(left) == 1 and left[0].startswith(f".{name}.") and left[0].endswith(".tmp"), left

    swept = sweep(file_folders=[folder])  # also sweeps the temp folder: other tests' leftovers may go too
    assert [path for path in swept.removed if path.parent == folder] == [folder / left[0]], swept.problems
    assert sorted(os.listdir(folder)) == entries
    assert _state(folder / name) == old


def test_a_live_writers_temp_file_is_not_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep removes only what a process that is gone left: a write in progress keeps its temp file."""
    target = tmp_path / "big.bin"
    seen: list[list[str]] = []
    real_replace = os.replace

    def look_first(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        sweep(file_folders=[tmp_path])
        seen.append(sorted(os.listdir(tmp_path)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", look_first)
    fsutil.atomic_write_bytes(target, b"x" * 1000)
    monkeypatch.undo()
    assert len(seen) == 1 and len(seen[0]) == 1 and seen[0][0].startswith(".big.bin."), seen
    assert target.read_bytes() == b"x" * 1000
    assert os.listdir(tmp_path) == ["big.bin"]


def test_a_new_file_follows_the_umask_and_a_replaced_one_keeps_its_mode(tmp_path: Path) -> None:
    """Outside a staging folder too: as readable as the user's umask makes files, or as they set it."""
    previous = os.umask(0o022)
    try:
        fsutil.atomic_write_text(tmp_path / "a.txt", "one")
        fsutil.atomic_write_text(tmp_path / "a.txt", "two")
        (tmp_path / "private.txt").write_text("one")
        (tmp_path / "private.txt").chmod(0o600)
        publish_json(tmp_path / "private.txt", {"two": 2})
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
    assert (tmp_path / "a.txt").read_text() == "two"
    assert stat.S_IMODE((tmp_path / "private.txt").stat().st_mode) == 0o600


@pytest.mark.parametrize("name", ["n" * 255, "é" * 127, "x" * 250 + ".json"])
def test_a_file_with_the_longest_name_the_filesystem_takes_can_be_replaced(tmp_path: Path, name: str) -> None:
    """The temp name shortens the target's name to fit: a file masked in place must never stay as it was."""
    assert len(os.fsencode(name)) <= fsutil.NAME_MAX
    target = tmp_path / name
    target.write_text("token=supersecret")
    fsutil.atomic_write_text(target, "token=***")
    publish_json(target, {"token": "***"})
    assert target.read_text() == '{\n  "token": "***"\n}\n'
    assert os.listdir(tmp_path) == [name]


def test_a_failed_folder_fsync_is_reported_with_the_file_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "suite.json"
    real_fsync = os.fsync

    def failing_on_folders(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_on_folders)
    with pytest.raises(
        EvidenceWriteError, match=r"saved .*suite\.json, but could not make the rename durable"
    ):
        publish_json(target, {"n": 1})
    with pytest.raises(fsutil.NotDurableError):
        fsutil.atomic_write_text(tmp_path / "b.txt", "b")
    monkeypatch.undo()
    assert target.read_text() == '{\n  "n": 1\n}\n'
    assert sorted(os.listdir(tmp_path)) == ["b.txt", "suite.json"]


def test_a_missing_folder_is_an_error_for_evidence_inside_a_staging_folder_too(tmp_path: Path) -> None:
    fsutil.sync_later(tmp_path)
    try:
        with pytest.raises(EvidenceWriteError, match="No such file or directory"):
            publish_json(tmp_path / "absent" / "result.json", {"n": 1})
    finally:
        fsutil.sync_later(tmp_path, False)
    assert os.listdir(tmp_path) == []


def test_a_failed_rename_of_latest_is_an_error_not_a_text_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only a platform without symbolic links gets a text file; a failing rename leaves the link as it was."""
    for run in ("run-a", "run-b"):
        (tmp_path / run).mkdir()
    set_latest(tmp_path, tmp_path / "run-a")

    real_replace = os.replace
    failed: list[str] = []

    def failing_once(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        if not failed:
            failed.append(os.fspath(dst))
            raise OSError(errno.EIO, "Input/output error")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_once)
    with pytest.raises(OSError, match="Input/output error"):
        set_latest(tmp_path, tmp_path / "run-b")
    monkeypatch.undo()
    assert os.readlink(tmp_path / "latest") == "run-a"
    assert sorted(os.listdir(tmp_path)) == ["latest", "run-a", "run-b"]


def test_a_dead_writers_temp_file_is_swept_whatever_its_name_holds(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    tag = f"{sleeper.pid}_{start_time(sleeper.pid)}"
    sleeper.kill()
    sleeper.wait()
    names = [f".{odd}.{tag}.ab12cd34.tmp" for odd in ("we\nird.json", "-dash", "sp ace", "é.json")]
    for name in names:
        (tmp_path / name).write_text("half")
    swept = sweep(file_folders=[tmp_path])
    assert sorted(path.name for path in swept.removed if path.parent == tmp_path) == sorted(names)
    assert os.listdir(tmp_path) == []


def test_racing_writers_leave_one_whole_file_and_readers_never_see_a_part(tmp_path: Path) -> None:
    """Threads rewriting one file while others read it: every read is one writer's whole payload."""
    target = tmp_path / "shared.txt"
    payloads = [(chr(ord("a") + n) * (1 + 7919 * n % 200_000)).encode() for n in range(8)]
    fsutil.atomic_write_bytes(target, payloads[0])
    stop = threading.Event()
    torn: list[int] = []

    def write(data: bytes) -> None:
        for _ in range(40):
            fsutil.atomic_write_bytes(target, data)

    def read() -> None:
        while not stop.is_set():
            data = target.read_bytes()
            if data not in payloads:
                torn.append(len(data))

    readers = [threading.Thread(target=read) for _ in range(2)]
    writers = [threading.Thread(target=write, args=(data,)) for data in payloads]
    for thread in readers + writers:
        thread.start()
    for thread in writers:
        thread.join()
    stop.set()
    for thread in readers:
        thread.join()
    assert torn == []
    assert target.read_bytes() in payloads
    assert os.listdir(tmp_path) == ["shared.txt"]


def test_a_temp_name_already_taken_is_drawn_again_for_latest_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another thread's temp name is no reason to give up the link for a text file."""
    (tmp_path / "run-a").mkdir()
    real_symlink = os.symlink
    taken: list[str] = []

    def taken_once(src: str, dst: str | os.PathLike[str], target_is_directory: bool = False) -> None:
        if not taken:
            taken.append(os.fspath(dst))
            raise FileExistsError(errno.EEXIST, "File exists")
        real_symlink(src, dst, target_is_directory=target_is_directory)

    monkeypatch.setattr(os, "symlink", taken_once)
    set_latest(tmp_path, tmp_path / "run-a")
    monkeypatch.undo()
    assert taken and os.readlink(tmp_path / "latest") == "run-a"
    assert sorted(os.listdir(tmp_path)) == ["latest", "run-a"]
