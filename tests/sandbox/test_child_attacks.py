"""Attacks on :mod:`trialbook.sandbox._child` and :func:`~trialbook.sandbox.run_process`, with real processes.

Every test starts real processes; nothing of the operating system is replaced. The exit is watched two
ways (the ``exit_watch`` fixture): by a pidfd, and by the fallback thread (``os.pidfd_open`` refused, as
a seccomp filter would). ``os.killpg`` and ``os.waitpid`` are wrapped, where a test needs to see the
order of the calls, by spies that record the call and pass it on unchanged.

Zombies are looked for read-only, in ``/proc/<pid>/stat`` (state ``Z`` with this process as the parent),
and a pid is checked as collected only by ``os.waitpid(pid, WNOHANG)`` on that pid alone, so no test
reaps a process another test owns.

``process.GRACE_S`` is shortened (``grace`` fixture) so that terminations and drains stay fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import hashlib
import itertools
import os
import signal
import struct
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.sandbox.procs import read_pids, running, wait_gone
from trialbook.sandbox import process, run_process
from trialbook.sandbox._capture import OutputCapture
from trialbook.sandbox._child import Child
from trialbook.sandbox.process import ProcessOutcome, _Stream

ENV = {"PATH": "/usr/bin:/bin"}
PY = [sys.executable, "-I", "-S", "-c"]
GUARD_S = 10.0
"""How long a run may take before a test calls it a hang (never a timing assertion)."""

# -- observing the process table, file descriptors and threads


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first, then ppid), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text.rsplit(")", 1)[1].split()


def _our_zombies() -> set[int]:
    """Children of this process that exited and were not collected (read-only: nothing is reaped)."""
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] == "Z" and fields[1] == me:
                found.add(int(entry))
    return found


def _collected(pid: int) -> bool:
    """``pid`` is no longer a child of this process (asks about that pid alone, never ``-1``)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def _open_fds() -> set[str]:
    gc.collect()
    return set(os.listdir("/proc/self/fd"))


def _waiters() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("trialbook-wait-")]


class Leaks:
    """What was open when a test started; :meth:`check` asserts nothing more is left behind."""

    def __init__(self) -> None:
        self.fds = _open_fds()
        self.zombies = _our_zombies()
        self.threads = {t.ident for t in threading.enumerate()}

    def check(self) -> None:
        for waiter in _waiters():  # a fallback thread ends right after it hands the exit to its loop
            waiter.join(GUARD_S)
        assert _waiters() == []
        assert {t.name for t in threading.enumerate() if t.ident not in self.threads} == set()
        assert _our_zombies() - self.zombies == set()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            after = _open_fds()  # a Popen never told of its exit warns here
        assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
        assert after - self.fds == set()


def _kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


async def _pids(path: Path, count: int) -> list[int]:
    """The first ``count`` pids a script writes to ``path`` (it writes them one a line)."""
    async with asyncio.timeout(GUARD_S):
        while True:
            with contextlib.suppress(FileNotFoundError, ValueError):
                pids = read_pids(path)
                if len(pids) >= count:
                    return pids
            await asyncio.sleep(0.01)


async def _until(predicate: Callable[[], bool]) -> None:
    async with asyncio.timeout(GUARD_S):
        while not predicate():
            await asyncio.sleep(0.01)


def _guarded(coro: Coroutine[Any, Any, ProcessOutcome]) -> Coroutine[Any, Any, ProcessOutcome]:
    return asyncio.wait_for(coro, GUARD_S)


# -- fixtures


@pytest.fixture(params=["pidfd", "thread"])
def exit_watch(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Watch the exit by pidfd, or (``os.pidfd_open`` refused) by the fallback thread."""
    if request.param == "thread":

        def refused(pid: int, flags: int = 0) -> int:
            raise OSError(errno.ENOSYS, "Function not implemented")

        monkeypatch.setattr(os, "pidfd_open", refused)
    return str(request.param)


@pytest.fixture
def grace(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(process, "GRACE_S", 0.3)
    return 0.3


class OsCalls:
    """Pass-through spies on ``os.killpg`` and ``os.waitpid``: each call is recorded, then made as asked."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.events: list[tuple[str, int, int]] = []
        self.before_wait: Callable[[int], None] | None = None
        real_killpg, real_waitpid = os.killpg, os.waitpid

        def killpg(pgid: int, sig: int) -> None:
            self.events.append(("killpg", pgid, int(sig)))
            real_killpg(pgid, sig)

        def waitpid(pid: int, options: int) -> tuple[int, int]:
            if pid > 0 and self.before_wait is not None:
                self.before_wait(pid)
            got = real_waitpid(pid, options)
            if pid > 0 and got[0] == pid:
                self.events.append(("reaped", pid, got[1]))
            return got

        monkeypatch.setattr(os, "killpg", killpg)
        monkeypatch.setattr(os, "waitpid", waitpid)

    def reaped(self) -> list[int]:
        return [pid for kind, pid, _ in self.events if kind == "reaped"]

    def signalled_after_reaped(self) -> list[tuple[int, int]]:
        """``(pgid, signal)`` of every group signal sent to a leader pid after that pid was collected."""
        gone: set[int] = set()
        late = []
        for kind, pid, value in self.events:
            if kind == "reaped":
                gone.add(pid)
            elif pid in gone:
                late.append((pid, value))
        return late


@pytest.fixture
def os_calls(monkeypatch: pytest.MonkeyPatch) -> OsCalls:
    return OsCalls(monkeypatch)


# -- the group dies with its leader, at the deadline, on cancellation

# Children that do not die of SIGTERM (ignored: inherited over exec), a grandchild, a stopped child.
STUBBORN_TREE = """
sleep 1000 & echo $! >> pids
( trap '' TERM HUP; sleep 1000 & echo $! >> pids; wait ) & echo $! >> pids
sleep 1000 & kill -STOP $!; echo $! >> pids
while [ "$(wc -l < pids)" -lt 4 ]; do sleep 0.01; done
echo $$ > leader
"""


@pytest.mark.asyncio
async def test_the_whole_group_dies_with_a_leader_that_exits(tmp_path: Path, exit_watch: str) -> None:
    leaks = Leaks()
    script = STUBBORN_TREE + "printf done; exit 7"
    outcome = await _guarded(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30))
    pids = read_pids(tmp_path / "pids")
    try:
        assert (outcome.returncode, outcome.stdout, outcome.timed_out) == (7, b"done", False)
        assert len(pids) == 4
        assert wait_gone(pids) == []
        assert _collected(read_pids(tmp_path / "leader")[0])
        leaks.check()
    finally:
        _kill_all(pids)


IGNORES_TERM = (
    "trap '' TERM; echo $$ >> pids; sleep 1000 & echo $! >> pids\n( sleep 1000 & echo $! >> pids; wait ) & "
)
"""A leader and two children (one in a subshell) that all ignore SIGTERM, their pids in ``pids``."""


@pytest.mark.parametrize("end", ["deadline", "cancellation"])
@pytest.mark.asyncio
async def test_a_group_that_ignores_sigterm_still_dies(
    tmp_path: Path, exit_watch: str, grace: float, end: str
) -> None:
    leaks = Leaks()
    if end == "deadline":
        script = IGNORES_TERM + "printf partial; wait"
        outcome = await _guarded(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=0.5))
        assert (outcome.returncode, outcome.stdout, outcome.timed_out) == (None, b"partial", True)
        pids = read_pids(tmp_path / "pids")
    else:
        task = asyncio.create_task(run_process(["bash", "-c", IGNORES_TERM + "wait"], cwd=tmp_path, env=ENV))
        pids = await _pids(tmp_path / "pids", 3)
        task.cancel()
    try:
        if end == "cancellation":
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, GUARD_S)
        assert len(pids) == 3
        assert wait_gone(pids) == []
        assert _collected(pids[0])
        leaks.check()
    finally:
        _kill_all(pids)


@pytest.mark.asyncio
async def test_a_deadline_of_the_caller_kills_the_group(tmp_path: Path, grace: float) -> None:
    # The caller's own timeout block, not run_process's: it reaches run_process as a cancellation.
    leaks = Leaks()
    blocks: list[asyncio.Timeout] = []

    async def caller() -> None:
        async with asyncio.timeout(None) as block:
            blocks.append(block)
            script = "echo $$ >> pids; sleep 1000 & echo $! >> pids; wait"
            await run_process(["bash", "-c", script], cwd=tmp_path, env=ENV)

    task = asyncio.create_task(caller())
    pids = await _pids(tmp_path / "pids", 2)
    try:
        blocks[0].reschedule(asyncio.get_running_loop().time())
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(task, GUARD_S)
        assert wait_gone(pids) == []
        assert _collected(pids[0])
        leaks.check()
    finally:
        _kill_all(pids)


# A process in a session of its own (out of reach of the group kill) keeps stdout and stderr open.
ESCAPEE = (
    "setsid bash -c 'echo $$ > esc.tmp; mv esc.tmp esc; exec sleep 1000' <&0 &\n"
    "while [ ! -s esc ]; do sleep 0.01; done; echo $$ > leader; echo leader-done\n"
)


@pytest.mark.asyncio
async def test_cancellation_while_draining_ends_at_once_and_leaves_nothing_open(
    tmp_path: Path, exit_watch: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "GRACE_S", 1000.0)  # the drain would wait this long for the escapee
    leaks = Leaks()
    task = asyncio.create_task(run_process(["bash", "-c", ESCAPEE + "exit 0"], cwd=tmp_path, env=ENV))
    escapee = await _pids(tmp_path / "esc", 1)
    try:
        leader = (await _pids(tmp_path / "leader", 1))[0]
        await _until(lambda: _stat(leader) is None)  # collected: run_process is about to wait for the pipes
        # The exit reaches run_process through its future's callbacks, a few turns of the loop after the
        # collection this test saw: cancelled before those, it is cancelled while waiting for the exit.
        for _ in range(10):
            await asyncio.sleep(0)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, GUARD_S)
        assert all(running(pid) for pid in escapee)  # it really held the pipes, out of the group's reach
        leaks.check()
    finally:
        _kill_all(escapee)


@pytest.mark.asyncio
async def test_cancellation_while_terminating_after_the_deadline_still_kills_the_group(
    tmp_path: Path, grace: float
) -> None:
    script = "trap 'echo term >> got' TERM; echo $$ > pids; while :; do sleep 0.05; done"
    task = asyncio.create_task(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=0.5))
    leader = (await _pids(tmp_path / "pids", 1))[0]
    try:
        await _until((tmp_path / "got").exists)  # the deadline passed: SIGTERM came, and was survived
        task.cancel()  # now, while run_process waits out the grace before SIGKILL
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, GUARD_S)
        assert wait_gone([leader]) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(leader, signal.SIGKILL)
        await _until(lambda: _stat(leader) is None)  # the loop still watches it and collects it


def test_cancelled_while_terminating_and_draining_then_the_loop_ends_the_group_still_dies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(process, "GRACE_S", 0.5)
    before = _open_fds()
    script = "trap 'echo term >> got' TERM; echo $$ > pids; while :; do sleep 0.05; done"

    async def main() -> None:
        task = asyncio.create_task(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV))
        await _pids(tmp_path / "pids", 1)
        task.cancel()  # run_process sends SIGTERM and waits the grace, shielded
        await _until((tmp_path / "got").exists)
        task.cancel()  # ... waits for the pipes
        for _ in range(3):
            await asyncio.sleep(0)
        task.cancel()  # ... and gives up on them
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, GUARD_S)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)  # an abandoned Popen warns once the loop is gone
        try:
            asyncio.run(main())  # like a program that ends once its work was cancelled
            leader = read_pids(tmp_path / "pids")[0]
            alive = wait_gone([leader])
            leaked = _open_fds() - before
            assert alive == []
            assert leaked == set()  # the pidfd of a process nobody watches any more
            assert [str(w.message) for w in caught] == []
        finally:
            leader = read_pids(tmp_path / "pids")[0]
            with contextlib.suppress(ProcessLookupError):
                os.killpg(leader, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(leader, 0)  # the loop that watched it is gone: it is this test's to collect
            gc.collect()


# -- pid reuse: the leader's pid is held (uncollected) until its group was killed, and not signalled after


def _kill_pending(pid: int) -> bool:
    """``pid`` is dead, dying, or has SIGKILL pending."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    if fields["State"].split()[0] in {"Z", "X"}:
        return True
    bit = 1 << (signal.SIGKILL - 1)
    return any(int(fields[name], 16) & bit for name in ("SigPnd", "ShdPnd"))


@pytest.mark.asyncio
async def test_the_group_is_killed_before_the_leader_is_collected(
    tmp_path: Path, exit_watch: str, os_calls: OsCalls
) -> None:
    script = "sleep 1000 & echo $! > pids; ( sleep 1000 & echo $! >> pids; wait ) & echo $! >> pids\n"
    script += 'while [ "$(wc -l < pids)" -lt 3 ]; do sleep 0.01; done; echo $$ > leader; exit 5'
    seen: dict[int, tuple[str | None, list[bool]]] = {}

    def before_wait(pid: int) -> None:  # recorded, not asserted: an error here would go to the loop's handler
        leader = tmp_path / "leader"
        if leader.exists() and read_pids(leader) == [pid]:
            state = _stat(pid)
            seen[pid] = (
                state[0] if state else None,
                [_kill_pending(m) for m in read_pids(tmp_path / "pids")],
            )

    os_calls.before_wait = before_wait
    outcome = await _guarded(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30))
    pids = read_pids(tmp_path / "pids")
    try:
        leader = read_pids(tmp_path / "leader")[0]
        assert outcome.returncode == 5  # collected by run_process, not by the waiting thread (that is 255)
        assert seen == {leader: ("Z", [True, True, True])}  # uncollected, its group already killed
        kills = [i for i, event in enumerate(os_calls.events) if event == ("killpg", leader, signal.SIGKILL)]
        assert kills and kills[0] < os_calls.events.index(("reaped", leader, 5 << 8))
        assert wait_gone(pids) == []
    finally:
        _kill_all(pids)


@pytest.mark.parametrize("how", ["deadline", "cancel", "cancel-after-exit"])
@pytest.mark.asyncio
async def test_no_group_signal_goes_to_a_leader_pid_that_was_collected(
    tmp_path: Path, os_calls: OsCalls, how: str
) -> None:
    if how == "deadline":  # sleep dies of the SIGTERM; the SIGKILL after it finds its pid free
        outcome = await _guarded(run_process(["sleep", "1000"], cwd=tmp_path, env=ENV, timeout_s=0.1))
        assert outcome.timed_out
    else:
        zombies = _our_zombies()
        argv = ["sleep", "1000"] if how == "cancel" else ["true"]
        task = asyncio.create_task(run_process(argv, cwd=tmp_path, env=ENV))
        await asyncio.sleep(0)  # started
        if how == "cancel-after-exit":
            deadline = time.monotonic() + GUARD_S
            while not _our_zombies() - zombies and time.monotonic() < deadline:
                time.sleep(
                    0.005
                )  # the loop is held: it has not seen the exit yet, the task is cancelled first
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, GUARD_S)
    assert len(os_calls.reaped()) == 1
    assert os_calls.signalled_after_reaped() == []


# -- output is kept whole


@pytest.mark.asyncio
async def test_large_output_on_both_pipes_at_once_is_kept_whole(tmp_path: Path, exit_watch: str) -> None:
    data = os.urandom(3 << 20)
    (tmp_path / "data").write_bytes(data)
    outcome = await _guarded(
        run_process(["bash", "-c", "cat data & cat data >&2; wait"], cwd=tmp_path, env=ENV, timeout_s=30)
    )
    assert outcome.returncode == 0
    assert outcome.stdout == data
    assert outcome.stderr == data


BINARY = b"\xff\xfe\x00bad\xc3(\xed\xa0\x80\r\n\x80half"


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.asyncio
async def test_binary_invalid_utf8_and_no_trailing_newline_are_kept_exactly(
    tmp_path: Path, merge: bool
) -> None:
    script = f"import os; os.write(1, {BINARY!r}); os.write(2, b'\\x80err-no-newline')"
    outcome = await _guarded(run_process([*PY, script], cwd=tmp_path, env=ENV, merge_stderr=merge))
    assert outcome.returncode == 0
    if merge:
        assert (outcome.stdout, outcome.stderr) == (BINARY + b"\x80err-no-newline", b"")
    else:
        assert (outcome.stdout, outcome.stderr) == (BINARY, b"\x80err-no-newline")
    lines: list[bytes] = []
    parsed = await _guarded(run_process([*PY, script], cwd=tmp_path, env=ENV, on_stdout_line=lines.append))
    assert lines == [b"\xff\xfe\x00bad\xc3(\xed\xa0\x80\r\n", b"\x80half"]  # the last, unended line too
    assert (parsed.stdout, parsed.stderr) == (b"", b"\x80err-no-newline")


@pytest.mark.asyncio
async def test_output_of_a_leader_killed_by_a_signal_is_kept(tmp_path: Path) -> None:
    outcome = await _guarded(
        run_process(["bash", "-c", "printf 'last words\\xff'; kill -KILL $$"], cwd=tmp_path, env=ENV)
    )
    assert (outcome.returncode, outcome.stdout, outcome.timed_out) == (
        -signal.SIGKILL,
        b"last words\xff",
        False,
    )


@pytest.mark.asyncio
async def test_output_of_a_group_member_killed_with_its_leader_is_kept(
    tmp_path: Path, exit_watch: str
) -> None:
    script = (
        "( printf 'member-out\\n'; printf 'member-err' >&2; touch wrote; exec sleep 1000 ) &\n"
        "echo $! > pids; while [ ! -e wrote ]; do sleep 0.01; done; printf leader-out"
    )
    outcome = await _guarded(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30))
    pids = read_pids(tmp_path / "pids")
    try:
        assert (outcome.returncode, outcome.stdout, outcome.stderr) == (
            0,
            b"member-out\nleader-out",
            b"member-err",
        )
        assert wait_gone(pids) == []
    finally:
        _kill_all(pids)


@pytest.mark.asyncio
async def test_many_tiny_writes_on_both_pipes_are_kept_in_order(tmp_path: Path, exit_watch: str) -> None:
    script = (
        "import os\nfor i in range(20000):\n    os.write(1, b'%d,' % i)\n    os.write(2, b'%x' % (i % 16))"
    )
    lines: list[bytes] = []
    outcome = await _guarded(run_process([*PY, script], cwd=tmp_path, env=ENV, timeout_s=30))
    merged = await _guarded(
        run_process([*PY, script], cwd=tmp_path, env=ENV, merge_stderr=True, on_stdout_line=lines.append)
    )
    assert outcome.stdout == b"".join(b"%d," % i for i in range(20000))
    assert outcome.stderr == b"".join(b"%x" % (i % 16) for i in range(20000))
    # One pipe for both: the writes stay in the order they were made, and no newline means one line.
    assert lines == [b"".join(b"%d,%x" % (i, i % 16) for i in range(20000))]
    assert (merged.returncode, merged.stdout, merged.stderr) == (0, b"", b"")


# Reads length-prefixed chunks from stdin, then writes each to stdout and stderr, pausing between them.
CHUNKER = """
import os, struct, sys, time
data = sys.stdin.buffer.read()
at = 0
while at < len(data):
    (size,) = struct.unpack_from(">I", data, at)
    chunk = data[at + 4 : at + 4 + size]
    at += 4 + size
    for fd in (1, 2):
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view):]
    time.sleep(0.002)
"""

_pieces = st.one_of(
    st.binary(max_size=200),
    st.sampled_from([b"\n", b"\r\n", b"\xff", b"\xc3", b"\x00", b"\n\n", b"\xe2\x82"]),
)


@settings(max_examples=12)
@given(chunks=st.lists(_pieces, max_size=12))
@example(chunks=[b"a" * 70000, b"\n" + b"b" * 200000, b"\xff"])  # over a read's 64 KiB and a pipe's
@example(chunks=[])
def test_any_chunking_of_the_output_is_captured_whole_and_cut_only_at_newlines(chunks: list[bytes]) -> None:
    data = b"".join(chunks)
    frames = b"".join(struct.pack(">I", len(chunk)) + chunk for chunk in chunks)
    lines: list[bytes] = []

    async def run() -> ProcessOutcome:
        return await _guarded(
            run_process(
                [*PY, CHUNKER],
                cwd=Path("/"),
                env=ENV,
                stdin=frames,
                timeout_s=30,
                on_stdout_line=lines.append,
            )
        )

    outcome = asyncio.run(run())
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stderr == data
    assert b"".join(lines) == data
    assert all(line.count(b"\n") == 1 and line.endswith(b"\n") for line in lines[:-1])
    assert all(lines) and (not lines or lines[-1].count(b"\n") <= 1)


@pytest.mark.asyncio
async def test_a_long_line_written_at_once_is_cut_at_the_line_limit(tmp_path: Path) -> None:
    lines: list[bytes] = []
    script = "import os; os.write(1, b'x' * 3000 + b'\\n')"  # one write under PIPE_BUF: one read
    await _guarded(
        run_process(
            [*PY, script],
            cwd=tmp_path,
            env=ENV,
            on_stdout_line=lines.append,
            capture=OutputCapture(limit=1024),
        )
    )
    assert len(lines) == 1
    assert len(lines[0]) <= 1024 + 1


def _lines(chunks: list[bytes], limit: int) -> list[bytes]:
    lines: list[bytes] = []
    stream = _Stream(None, lines.append, limit)
    for chunk in chunks:
        stream.feed(chunk)
    stream.end()
    return lines


@settings(max_examples=50)
@given(
    lengths=st.lists(st.integers(0, 2500), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 10000), max_size=6),
)
@example(lengths=[3000], cuts=[])
def test_lines_cut_at_the_limit_do_not_depend_on_the_chunking(lengths: list[int], cuts: list[int]) -> None:
    limit = 1024
    data = b"".join(b"x" * n + b"\n" for n in lengths)
    at = sorted({min(cut, len(data)) for cut in cuts} | {0, len(data)})
    chunks = [data[a:b] for a, b in itertools.pairwise(at) if b > a]
    whole = _lines([data], limit)
    assert _lines(chunks, limit) == whole
    assert all(len(line) <= limit + 1 for line in whole)


# -- bounded time though a process outside the group holds the pipes


@pytest.mark.parametrize(
    ("how", "exit_watch"),
    [("exit", "thread"), ("deadline", "pidfd"), ("cancel", "pidfd"), ("stdin", "pidfd"), ("stdin", "thread")],
    indirect=["exit_watch"],
)
@pytest.mark.asyncio
async def test_a_session_escapee_holding_the_pipes_does_not_hold_up_the_return(
    tmp_path: Path, exit_watch: str, grace: float, how: str
) -> None:
    leaks = Leaks()
    end = {"exit": "exit 3", "deadline": "sleep 1000", "cancel": "sleep 1000", "stdin": "exit 4"}[how]
    stdin = os.urandom(4 << 20) if how == "stdin" else None  # the escapee has stdin and never reads it
    timeout_s = {"deadline": 0.5, "cancel": None}.get(how, 30.0)
    task = asyncio.create_task(
        run_process(["bash", "-c", ESCAPEE + end], cwd=tmp_path, env=ENV, stdin=stdin, timeout_s=timeout_s)
    )
    escapee = await _pids(tmp_path / "esc", 1)
    try:
        held = [os.readlink(f"/proc/{escapee[0]}/fd/{fd}") for fd in (0, 1, 2)]
        assert [link.startswith("pipe:") for link in held] == [how == "stdin", True, True]
        if how == "cancel":
            await _pids(tmp_path / "leader", 1)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, GUARD_S)
        else:
            outcome = await asyncio.wait_for(task, GUARD_S)
            expected = {"exit": (3, False), "deadline": (None, True), "stdin": (4, False)}[how]
            assert (outcome.returncode, outcome.timed_out) == expected
            assert outcome.stdout == b"leader-done\n"
        assert all(running(pid) for pid in escapee)
        assert _collected(read_pids(tmp_path / "leader")[0])
        leaks.check()
    finally:
        _kill_all(escapee)


# -- deaths by signal are reported as Popen reports them


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV])
@pytest.mark.asyncio
async def test_a_death_by_signal_is_its_negative_number_as_popen_has_it(
    tmp_path: Path, exit_watch: str, sig: signal.Signals
) -> None:
    script = (
        "import os, resource, signal; resource.setrlimit(resource.RLIMIT_CORE, (0, 0)); "
        f"os.write(1, b'before'); os.kill(os.getpid(), {int(sig)})"
    )
    argv = [*PY, script]
    popen = subprocess.run(argv, cwd=tmp_path, env=ENV, capture_output=True, timeout=GUARD_S, check=False)
    outcome = await _guarded(run_process(argv, cwd=tmp_path, env=ENV, timeout_s=30))
    assert popen.returncode == -sig
    assert (outcome.returncode, outcome.stdout, outcome.timed_out) == (popen.returncode, b"before", False)


@pytest.mark.asyncio
async def test_a_leader_killed_from_outside_reports_the_signal_and_takes_its_group(tmp_path: Path) -> None:
    script = "echo $$ > pids; sleep 1000 & echo $! >> pids; wait"
    task = asyncio.create_task(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=30))
    pids = await _pids(tmp_path / "pids", 2)
    try:
        os.kill(pids[0], signal.SIGTERM)
        outcome = await asyncio.wait_for(task, GUARD_S)
        assert (outcome.returncode, outcome.timed_out) == (-signal.SIGTERM, False)
        assert wait_gone(pids) == []
    finally:
        _kill_all(pids)


# -- standard input: several MiB, read or not, closed early


@pytest.mark.parametrize("reader", ["reads-all", "never-reads", "never-reads-never-ends", "closes-early"])
@pytest.mark.asyncio
async def test_large_standard_input_never_hangs_and_never_raises(
    tmp_path: Path, exit_watch: str, grace: float, reader: str
) -> None:
    leaks = Leaks()
    data = os.urandom(6 << 20)
    argv, expected = {
        "reads-all": (["sha256sum"], (0, f"{hashlib.sha256(data).hexdigest()}  -\n".encode(), False)),
        "never-reads": (["bash", "-c", "sleep 0.2; exit 4"], (4, b"", False)),
        "never-reads-never-ends": (["sleep", "1000"], (None, b"", True)),
        # It reads a little, closes its end (later writes get EPIPE) and goes on living and printing.
        "closes-early": (
            ["bash", "-c", "head -c 1000 > /dev/null; exec 0<&-; sleep 0.2; echo after"],
            (0, b"after\n", False),
        ),
    }[reader]
    timeout_s = 0.4 if reader == "never-reads-never-ends" else 30.0
    outcome = await _guarded(run_process(argv, cwd=tmp_path, env=ENV, stdin=data, timeout_s=timeout_s))
    assert (outcome.returncode, outcome.stdout, outcome.timed_out) == expected
    leaks.check()


# -- a reader that raises


class _Failing:
    def __init__(self, on: str) -> None:
        self.on = on
        self.fed = 0

    def feed(self, chunk: bytes) -> None:
        self.fed += 1
        if self.on == "feed":
            raise ValueError("bad feed")

    def end(self) -> None:
        if self.on == "end":
            raise ValueError("bad end")


class _Keeping:
    def __init__(self) -> None:
        self.data = bytearray()
        self.ended = False

    def feed(self, chunk: bytes) -> None:
        self.data += chunk

    def end(self) -> None:
        self.ended = True


@pytest.mark.parametrize("on", ["feed", "end"])
@pytest.mark.asyncio
async def test_a_failing_reader_is_reported_and_holds_nothing_up(
    tmp_path: Path, exit_watch: str, on: str
) -> None:
    leaks = Leaks()
    # 3 MB after the first line: far more than a pipe holds, so a pipe left unread would stall it.
    script = "echo first; head -c 3000000 /dev/zero; echo $$ > finished; echo err >&2; exit 6"
    failing, keeping = _Failing(on), _Keeping()
    child = Child(
        asyncio.get_running_loop(),
        ["bash", "-c", script],
        cwd=tmp_path,
        env=ENV,
        stdin=b"unread" * 100000,
        stdout=failing,
        stderr=keeping,
    )
    try:
        assert await asyncio.wait_for(asyncio.shield(child.exited), GUARD_S) == 6
        await asyncio.wait_for(asyncio.shield(child.drained), GUARD_S)
    finally:
        child.close()
    assert isinstance(child.error, ValueError)
    assert str(child.error) == f"bad {on}"
    if on == "feed":
        assert failing.fed == 1  # the rest was read and dropped
    assert (tmp_path / "finished").exists()
    assert _collected(child.pid)
    leaks.check()


@pytest.mark.asyncio
async def test_an_on_line_error_at_the_unended_last_line_reaches_the_caller(tmp_path: Path) -> None:
    leaks = Leaks()

    def parse(line: bytes) -> None:
        if not line.endswith(b"\n"):
            raise ValueError(f"truncated event {line!r}")

    script = "echo '{}'; printf '{\"half'; echo $$ > pid"
    with pytest.raises(ValueError, match="truncated event"):
        await _guarded(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, on_stdout_line=parse))
    assert _collected(read_pids(tmp_path / "pid")[0])
    leaks.check()


# -- loops in other threads, several at once


def test_several_loops_in_threads_at_once_each_see_their_own_processes(
    tmp_path: Path, exit_watch: str, grace: float
) -> None:
    leaks = Leaks()
    count = 4
    start = threading.Barrier(count)
    results: dict[int, object] = {}
    payload = os.urandom(1 << 20)

    async def work(index: int) -> tuple[object, ...]:
        folder = tmp_path / str(index)
        folder.mkdir()
        echoed = await run_process(["cat"], cwd=folder, env=ENV, stdin=payload, timeout_s=30)
        code = await run_process(["bash", "-c", f"exit {index + 10}"], cwd=folder, env=ENV, timeout_s=30)
        tree = "echo $$ >> {0}; sleep 1000 & echo $! >> {0}; wait"
        timed = await run_process(["bash", "-c", tree.format("timed")], cwd=folder, env=ENV, timeout_s=0.3)
        task = asyncio.create_task(run_process(["bash", "-c", tree.format("cancelled")], cwd=folder, env=ENV))
        pids = await _pids(folder / "cancelled", 2)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        with contextlib.suppress(FileNotFoundError):  # cut at 0.3 s, it may not have got to writing them
            pids += read_pids(folder / "timed")
        return (echoed.stdout == payload, code.returncode, timed.timed_out, task.cancelled(), pids)

    def thread(index: int) -> None:
        start.wait(GUARD_S)
        try:
            results[index] = asyncio.run(asyncio.wait_for(work(index), GUARD_S))
        except BaseException as exc:
            results[index] = exc

    threads = [threading.Thread(target=thread, args=(i,), name=f"attack-{i}") for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GUARD_S * 2)
    pids = [pid for r in results.values() if isinstance(r, tuple) for pid in r[-1]]
    try:
        assert {i: r[:-1] if isinstance(r, tuple) else r for i, r in results.items()} == {
            i: (True, i + 10, True, True) for i in range(count)
        }
        assert wait_gone(pids) == []
        leaks.check()
    finally:
        _kill_all(pids)


# -- nothing left behind, however it ends


@pytest.mark.parametrize("timeout_s", [0.0, -1.0])
@pytest.mark.asyncio
async def test_a_deadline_already_past_still_ends_what_was_started(
    tmp_path: Path, exit_watch: str, grace: float, timeout_s: float
) -> None:
    leaks = Leaks()
    script = "echo $$ >> pids; sleep 1000 & echo $! >> pids; wait"
    outcome = await _guarded(run_process(["bash", "-c", script], cwd=tmp_path, env=ENV, timeout_s=timeout_s))
    assert (outcome.returncode, outcome.timed_out) == (None, True)
    pids = read_pids(tmp_path / "pids") if (tmp_path / "pids").exists() else []
    try:
        assert wait_gone(pids) == []
        leaks.check()
    finally:
        _kill_all(pids)


@pytest.mark.parametrize("failure", ["missing", "not-executable", "a-directory", "no-cwd", "cwd-a-file"])
@pytest.mark.asyncio
async def test_a_process_that_cannot_start_leaves_nothing_behind(
    tmp_path: Path, exit_watch: str, failure: str
) -> None:
    (tmp_path / "script").write_text("#!/bin/sh\nexit 0\n")  # mode 0644
    argv, cwd, error = {
        "missing": (["no-such-program-here"], tmp_path, FileNotFoundError),
        "not-executable": ([str(tmp_path / "script")], tmp_path, PermissionError),
        "a-directory": ([str(tmp_path)], tmp_path, PermissionError),
        "no-cwd": (["true"], tmp_path / "missing", FileNotFoundError),
        "cwd-a-file": (["true"], tmp_path / "script", NotADirectoryError),
    }[failure]
    leaks = Leaks()
    for _ in range(3):
        with pytest.raises(error):
            await _guarded(run_process(argv, cwd=cwd, env=ENV, stdin=b"x" * 100000, timeout_s=30))
    leaks.check()


@pytest.mark.asyncio
async def test_success_deadline_and_cancellation_leave_nothing_behind(
    tmp_path: Path, exit_watch: str, grace: float
) -> None:
    leaks = Leaks()
    for _ in range(3):
        ok = await _guarded(
            run_process(
                ["bash", "-c", "echo $$ >> pids; cat"], cwd=tmp_path, env=ENV, stdin=b"in", timeout_s=30
            )
        )
        assert ok.stdout.endswith(b"in")
        timed = await _guarded(
            run_process(["bash", "-c", "echo $$ >> pids; sleep 1000"], cwd=tmp_path, env=ENV, timeout_s=0.1)
        )
        assert timed.timed_out
        count = len(read_pids(tmp_path / "pids"))
        task = asyncio.create_task(
            run_process(
                ["bash", "-c", "echo $$ >> pids; sleep 1000"], cwd=tmp_path, env=ENV, merge_stderr=True
            )
        )
        await _pids(tmp_path / "pids", count + 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, GUARD_S)
    leaders = read_pids(tmp_path / "pids")  # a run cut at 0.1 s may not have got to writing its pid
    assert len(leaders) >= 6
    assert all(_collected(pid) for pid in leaders)
    leaks.check()


@pytest.fixture(autouse=True)
def _no_stray_children() -> Iterator[None]:
    """Whatever a test above did, no child of this process may be left a zombie for the next one."""
    before = _our_zombies()
    yield
    assert _our_zombies() - before == set()
