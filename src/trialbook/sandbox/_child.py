"""A child process watched by the event loop itself: its pipes and its exit are file descriptors it polls.

asyncio's subprocess layer puts a transport and a protocol on the process and on each of its pipes, and
sets them up and tears them down over a dozen callbacks and several turns of the loop: per process, on
the one thread every running trial shares. A trial needs less: the bytes of its pipes as they come and
the moment its leader exits. :class:`Child` forks with :class:`subprocess.Popen` in the caller's turn of
the loop (the agent starts at once, before whatever else is ready), reads each pipe in a reader
callback, feeds standard input from a writer callback and learns of the exit from a pidfd (Linux 5.3
and later). Where there are no pidfds a thread waits for the exit without collecting it.

The leader is collected on the loop only after its process group was killed: while it is an
uncollected zombie no new process can take its pid, so the group kill cannot reach another's group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

__all__ = ["Child", "Reader", "kill_group"]

_CHUNK = 1 << 16


def kill_group(pid: int, sig: int = signal.SIGKILL) -> None:
    """Signal the process group led by ``pid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


class Reader(Protocol):
    """Where a pipe's bytes go: each chunk as it is read, then its end."""

    def feed(self, chunk: bytes) -> None:
        """Take the next chunk (never empty)."""

    def end(self) -> None:
        """The pipe reached its end (or was closed before it)."""


class Child:
    """One started process in a session of its own, its pipes read and its exit watched by ``loop``.

    ``exited`` has the leader's exit code once it exited and was collected (255 when something else
    collected it first, as asyncio reports); ``drained`` is done once every pipe reached its end.
    An exception a reader raises is kept in ``error`` (the pipe is still read to its end, so the process
    is never held up writing) for the caller to raise. :meth:`close` must be called in the end: it
    closes what is still open, whether or not the pipes ended.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        stdin: bytes | None,
        stdout: Reader,
        stderr: Reader | None,
    ) -> None:
        """Start ``argv`` now; ``stderr=None`` sends standard error into standard output's pipe."""
        self._loop = loop
        self.error: BaseException | None = None
        self.exited: asyncio.Future[int] = loop.create_future()
        self.drained: asyncio.Future[None] = loop.create_future()
        self._readers: dict[int, Reader] = {}
        self._stdin_fd: int | None = None
        self._pending = memoryview(stdin or b"")
        self._pidfd: int | None = None
        self._collected = False
        theirs: list[int] = []  # the child's ends, closed here once it has them
        ours: list[int] = []
        try:
            # Not inheritable (PEP 446): no other process started meanwhile gets them.
            out_r, out_w = os.pipe()
            ours.append(out_r)
            theirs.append(out_w)
            err_w: int = subprocess.STDOUT
            if stderr is not None:
                err_r, err_w = os.pipe()
                ours.append(err_r)
                theirs.append(err_w)
            in_r: int = subprocess.DEVNULL
            if stdin is not None:
                in_r, in_w = os.pipe()
                ours.append(in_w)
                theirs.append(in_r)
            self._popen = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=in_r,
                stdout=out_w,
                stderr=err_w,
                start_new_session=True,
            )
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        self.pid: int = self._popen.pid
        self._watch(out_r, stdout)
        if stderr is not None:
            self._watch(err_r, stderr)
        if stdin is not None:
            self._stdin_fd = in_w
            os.set_blocking(in_w, False)
            self._write()
            if self._stdin_fd is not None:
                loop.add_writer(in_w, self._write)
        self._watch_exit()

    # -- the pipes

    def _watch(self, fd: int, reader: Reader) -> None:
        os.set_blocking(fd, False)
        self._readers[fd] = reader
        self._loop.add_reader(fd, self._read, fd)

    def _read(self, fd: int) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        reader = self._readers[fd]
        if chunk:
            self._deliver(reader.feed, chunk)
            return
        self._end(fd)

    def _deliver(self, call: Callable[..., None], *args: bytes) -> None:
        if self.error is not None:
            return  # a reader failed: the rest is read and dropped
        try:
            call(*args)
        except Exception as exc:
            self.error = exc

    def _end(self, fd: int) -> None:
        reader = self._readers.pop(fd)
        self._loop.remove_reader(fd)
        os.close(fd)
        self._deliver(reader.end)
        if not self._readers and not self.drained.done():
            self.drained.set_result(None)

    def _write(self) -> None:
        assert self._stdin_fd is not None
        try:
            written = os.write(self._stdin_fd, self._pending)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:  # the process closed its end (EPIPE): what it did not read is dropped
            written = len(self._pending)
        self._pending = self._pending[written:]
        if not self._pending:
            self._close_stdin()

    def _close_stdin(self) -> None:
        fd, self._stdin_fd = self._stdin_fd, None
        if fd is not None:
            self._loop.remove_writer(fd)
            os.close(fd)

    # -- the exit

    def _watch_exit(self) -> None:
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux, a kernel before 5.3, or a seccomp filter refusing it
            name = f"trialbook-wait-{self.pid}"
            threading.Thread(target=self._wait_elsewhere, name=name, daemon=True).start()
        else:
            self._loop.add_reader(self._pidfd, self._collect)

    def _wait_elsewhere(self) -> None:
        """In a thread of its own: wait for the exit, leaving the zombie for :meth:`_collect` on the loop."""
        with contextlib.suppress(ChildProcessError):
            if hasattr(os, "waitid"):
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
            else:  # no waitid: collected here, so the group kill comes after the pid is free again
                self._finish(os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1]), threaded=True)
                return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting any more
            self._loop.call_soon_threadsafe(self._collect)

    def end_now(self, timeout_s: float) -> None:
        """Kill the group and collect the leader in this call, for a caller that can no longer wait.

        A cancellation can reach a caller while it waits for the exit (the event loop shutting down
        cancels every task): the group must end all the same, and the leader must not be left a zombie
        with its pidfd open. Blocks at most ``timeout_s`` for the leader to die; one still alive then
        (stuck in the kernel) is left to the exit watch.
        """
        if self._collected:
            return
        if not hasattr(os, "waitid"):  # the waiting thread collects it, and kills the group then
            if self._popen.returncode is None:
                kill_group(self.pid)
            return
        kill_group(self.pid)  # not collected yet: the pid still names this group
        deadline = time.monotonic() + timeout_s
        while not self._collected:
            try:
                gone = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:  # collected elsewhere: _collect says so
                gone = True
            if gone:
                self._collect()
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            if self._pidfd is not None:
                select.select([self._pidfd], [], [], left)
            else:
                time.sleep(min(left, 0.001))

    def _collect(self) -> None:
        if self._collected:  # end_now was first; the waiting thread's call comes after
            return
        self._collected = True
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        # What the leader left in its group must not outlive it (nor hold its pipes open).
        kill_group(self.pid)
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:  # collected elsewhere already
            code = 255
        else:
            code = os.waitstatus_to_exitcode(status)
        self._finish(code, threaded=False)

    def _finish(self, code: int, *, threaded: bool) -> None:
        self._popen.returncode = code  # so Popen never waits for it again
        if threaded:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._exited, code, True)
            return
        self._exited(code, False)

    def _exited(self, code: int, kill: bool) -> None:
        if kill:
            kill_group(self.pid)
        if not self.exited.done():
            self.exited.set_result(code)

    def close(self) -> None:
        """Stop reading and writing; close every file descriptor still open. The exit is still watched."""
        self._close_stdin()
        for fd in list(self._readers):
            self._end(fd)
