"""What a finished trial lets checks read: every way an agent could point a check elsewhere reads as missing.

Checks walk a path one ``lstat`` per component and resolve only paths through a symlink, so these attack
both ways: links at every depth, a workdir swapped for a link, files swapped after the walk, and files
that are not files at all.
"""

import os
import shutil
import threading
from pathlib import Path

import pytest

from tests.sandbox.conftest import MakeSandbox
from trialbook.evidence import AgentResult
from trialbook.sandbox import Sandbox

RESULT = AgentResult(agent_name="test", agent_version=None, success=True, error=None, stop_reason="completed")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("runner file\n")
    return folder


def test_links_inside_are_followed_and_links_outside_read_as_missing(
    make_sandbox: MakeSandbox, outside: Path
) -> None:
    sandbox = make_sandbox()
    work = sandbox.workdir
    (work / "src" / "deep").mkdir(parents=True)
    (work / "src" / "deep" / "main.py").write_text("print('hi')\n")
    (work / "alias").symlink_to("src")  # a folder link that stays inside
    (work / "src" / "up").symlink_to("..")  # a link back to the workdir itself
    (work / "out").symlink_to(outside)  # a folder link that leaves
    (work / "src" / "deep" / "leak").symlink_to(outside / "secret.txt")  # a file link that leaves, deep
    (work / "src" / "abs").symlink_to(work / "src" / "deep" / "main.py")  # absolute, but inside
    trial = sandbox.finished(RESULT)
    for inside in ("alias/deep/main.py", "src/up/src/deep/main.py", "src/abs", "src/deep/main.py"):
        assert trial.read_text(inside) == "print('hi')\n", inside
        assert trial.exists(inside), inside
    for leaving in ("out/secret.txt", "out", "src/deep/leak", "alias/deep/leak", "out/missing"):
        assert trial.read_text(leaving) is None, leaving
        assert not trial.exists(leaving), leaving
    # Missing on the way, or a file used as a folder: missing, not an error.
    for missing in ("nope/x.txt", "src/deep/main.py/x", "src/deep/none"):
        assert trial.read_text(missing) is None, missing
        assert not trial.exists(missing), missing


def test_a_workdir_swapped_for_a_link_reads_as_missing(make_sandbox: MakeSandbox, outside: Path) -> None:
    # The agent can write to the sandbox folder that holds its workdir, so it can replace the workdir
    # itself with a link to anywhere: nothing through it may be read, however short the path.
    sandbox = make_sandbox()
    shutil.rmtree(sandbox.workdir)
    sandbox.workdir.symlink_to(outside)
    trial = sandbox.finished(RESULT)
    assert trial.read_text("secret.txt") is None
    assert not trial.exists("secret.txt")
    assert not trial.exists(".")


def test_a_fifo_reads_as_missing_without_waiting(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    os.mkfifo(sandbox.workdir / "pipe")
    (sandbox.workdir / "via-link").symlink_to("pipe")  # the resolved way must not wait either
    trial = sandbox.finished(RESULT)
    done = threading.Event()
    seen: list[str | None] = []

    def read() -> None:
        seen.extend((trial.read_text("pipe"), trial.read_text("via-link")))
        done.set()

    threading.Thread(target=read, daemon=True).start()
    if not done.wait(10):
        # Unblock the reader before failing, so the test run does not hang on the thread.
        with open(sandbox.workdir / "pipe", "wb"):
            pass
        pytest.fail("reading a FIFO waited for a writer")
    assert seen == [None, None]
    assert trial.exists("pipe")  # it is there; it is just not a text file


def test_text_reads_with_universal_newlines_and_replaced_bad_bytes(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    (sandbox.workdir / "crlf.txt").write_bytes(b"one\r\ntwo\rthree\n\xff end")
    big = b"x" * (3 << 20) + b"\r\n"  # more than one read's worth
    (sandbox.workdir / "big.txt").write_bytes(big)
    trial = sandbox.finished(RESULT)
    assert trial.read_text("crlf.txt") == "one\ntwo\nthree\n\ufffd end"
    assert trial.read_text("big.txt") == "x" * (3 << 20) + "\n"
    (sandbox.workdir / "empty.txt").write_bytes(b"")
    assert trial.read_text("empty.txt") == ""


def test_a_file_swapped_for_a_link_after_the_walk_is_not_followed(
    make_sandbox: MakeSandbox, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between the walk's lstat and the open, the file becomes a link to the runner's file: the open
    # refuses to follow it instead of reading what it points at.
    sandbox: Sandbox = make_sandbox()
    target = sandbox.workdir / "out.txt"
    target.write_text("ok\n")
    trial = sandbox.finished(RESULT)
    real_lstat = os.lstat

    def lstat_then_swap(path: str | os.PathLike[str]) -> os.stat_result:
        info = real_lstat(path)
        if os.fspath(path) == os.fspath(target):
            target.unlink()
            target.symlink_to(outside / "secret.txt")
        return info

    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    assert trial.read_text("out.txt") is None
