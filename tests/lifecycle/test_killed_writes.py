"""A write killed with SIGKILL between its temp file and its rename: the old file stays whole, and the
temp file left beside it carries its owner, so the next run's sweep (and ``trialbook clean``) removes it.

Every writer of a file a reader may find goes through the one durable write in ``trialbook.fsutil``;
each is killed here at its worst moment, in a real child process, by making ``os.replace`` send the
child a ``SIGKILL``.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from trialbook import fsutil
from trialbook.leftovers import sweep

ROOT = Path(__file__).resolve().parents[2]

# Each writer: how the folder looks before, the write that is killed, and what the target then holds.
WRITERS = {
    "atomic_write_bytes": (
        "(folder / 'notes.txt').write_text('old whole')",
        "from trialbook.fsutil import atomic_write_text\n"
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

    swept = sweep(file_folders=[folder])
    assert swept.removed == [folder / left[0]], swept.problems
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


def test_a_replaced_file_follows_the_umask_like_a_new_one(tmp_path: Path) -> None:
    """Outside a staging folder too, a written file is as readable as any the user's umask makes."""
    previous = os.umask(0o022)
    try:
        fsutil.atomic_write_text(tmp_path / "a.txt", "one")
        fsutil.atomic_write_text(tmp_path / "a.txt", "two")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "a.txt").stat().st_mode) == 0o644
    assert (tmp_path / "a.txt").read_text() == "two"


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
