"""What Linux's ``/proc`` says about processes: parents, states, start times and environment markers.

Everything here is a best-effort read of a moving target: a process can exit between listing and reading,
so a vanished or unreadable entry is skipped, never raised. On systems without ``/proc`` (macOS) the
functions report nothing and :func:`start_time` falls back to whether the pid is alive.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from .._util.owner import pid_alive

__all__ = [
    "ProcEntry",
    "boot_ticks",
    "clock_agrees",
    "dying",
    "entry",
    "environ_value",
    "has_procfs",
    "marker",
    "mid_exec",
    "processes",
    "read_proc",
    "start_time",
]

_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcEntry:
    """One process: its parent, its state letter (``Z`` for a zombie), its marker value and its session.

    ``marker`` is ``None`` when the process has none or its environment was not read; ``session`` is
    ``None`` when it was not read.
    """

    pid: int
    ppid: int
    state: str
    marker: str | None
    session: int | None = None
    started: int | None = None
    """Start time in clock ticks since boot (:func:`boot_ticks`); ``None`` when not read."""


@functools.cache
def has_procfs() -> bool:
    """Whether process tables can be read from ``/proc`` (Linux); once per process, as it cannot change."""
    return os.path.exists("/proc/self/stat")


_BLOCK = 1 << 16


def read_proc(path: str) -> bytes:
    # os-level reads: a sweep opens two files per process, and pathlib's overhead dominated its cost.
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        first = os.read(fd, _BLOCK)
        if len(first) < _BLOCK // 2:
            return first  # procfs hands a small file over whole in one read: no second call for EOF
        chunks = [first]
        while chunk := os.read(fd, _BLOCK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _stat_fields(pid: int | str) -> list[str] | None:
    try:
        raw = read_proc(f"/proc/{pid}/stat")
    except OSError:
        return None
    # The command name sits in parentheses and may itself hold spaces or ')'; fields follow the last ')'.
    close = raw.rfind(b")")
    if close < 0:
        return None
    return raw[close + 2 :].decode("ascii", "replace").split()


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_MARGIN_TICKS = 2 * _TICKS
"""How much earlier than asked a process may have started and still be listed: the kernel's start
times and the boot clock round differently, and a margin only costs a few reads."""


def boot_ticks() -> int | None:
    """Now, in the clock ticks since boot that ``/proc/<pid>/stat`` gives start times in (Linux)."""
    clock = getattr(time, "CLOCK_BOOTTIME", None)
    if clock is None:
        return None
    return int(time.clock_gettime(clock) * _TICKS)


@functools.cache
def clock_agrees() -> bool:
    """Whether :func:`boot_ticks` and ``/proc`` start times agree here: a thread started now starts now.

    Checked once per process with a real thread, so a kernel or container whose start times run on
    another clock makes the sweeps read every process rather than miss a young one.
    """
    if not has_procfs() or boot_ticks() is None:
        return False
    ready, done = threading.Event(), threading.Event()
    native: list[int] = []

    def probe() -> None:
        native.append(threading.get_native_id())
        ready.set()
        done.wait(5)

    before = boot_ticks()
    thread = threading.Thread(target=probe, name="trialbook-clock-probe", daemon=True)
    thread.start()
    try:
        ready.wait(5)
        fields = _stat_fields(f"self/task/{native[0]}") if native else None
    finally:
        done.set()
        thread.join(5)
    after = boot_ticks()
    if fields is None or len(fields) < 20 or before is None or after is None:
        return False
    try:
        started = int(fields[19])
    except ValueError:
        return False
    return before - _MARGIN_TICKS // 2 <= started <= after + _MARGIN_TICKS // 2


def processes(variable: str | None = None, *, since: int | None = None) -> Iterator[ProcEntry]:
    """Every visible process but this one, with the value ``variable`` has in its environment.

    The environment is inherited across ``setsid``, double forks and new process groups, which is what
    makes a variable a marker that survives every way of leaving a process tree. With ``since`` (a
    :func:`boot_ticks` value) only processes started from then on are listed: a marker made at ``since``
    cannot be in the environment of a process that started before it existed, and a process descends
    only from processes older than itself, so a sweep for that marker (and for the descendants of
    commands started since) needs no older process. Most of a machine's processes are older than any
    trial, so a sweep reads a handful of environments instead of hundreds. Where this machine's boot
    clock and ``/proc`` start times disagree (:func:`clock_agrees`), ``since`` is ignored.
    """
    me = os.getpid()
    try:
        names = os.listdir(_PROC)
    except OSError:
        return
    wanted = b"\0" + variable.encode() + b"=" if variable else None
    oldest = since if since is not None and clock_agrees() else None
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        fields = _stat_fields(name)
        if fields is None or len(fields) < 2 or not _young(fields, oldest):
            continue
        marker = None
        # Kernel threads (children of kthreadd, pid 2) and init have no marker, and reading a kernel
        # thread's environ can stall for tens of milliseconds.
        if wanted is not None and fields[1] not in ("0", "2"):
            with contextlib.suppress(OSError):
                marker = _value(b"\0" + read_proc(f"/proc/{name}/environ"), wanted)
        with contextlib.suppress(ValueError, IndexError):
            yield ProcEntry(int(name), int(fields[1]), fields[0], marker, int(fields[3]), _started(fields))


_EXIT_SIGNAL = 35
"""Where ``exit_signal`` (field 38 of ``/proc/<pid>/stat``) sits after the command name: -1 for a thread."""


def entry(pid: int) -> ProcEntry | None:
    """``pid`` as a process (its marker not read); ``None`` for a thread, a kernel thread or no process.

    A thread's id opens ``/proc/<tid>`` too (though ``/proc`` does not list it), so a caller probing pids
    one by one needs threads told apart, or a many-threaded process would count once per thread.
    """
    fields = _stat_fields(pid)
    if fields is None or len(fields) <= _EXIT_SIGNAL:
        return None
    try:
        ppid, session, exit_signal = int(fields[1]), int(fields[3]), int(fields[_EXIT_SIGNAL])
    except ValueError:
        return None
    if exit_signal == -1 or ppid == 2 or pid == 2:  # a thread; a kernel thread (child of kthreadd)
        return None
    return ProcEntry(pid, ppid, fields[0], None, session, _started(fields))


def _started(fields: list[str]) -> int | None:
    try:
        return int(fields[19]) if len(fields) > 19 else None
    except ValueError:
        return None


_SETTLING_TICKS = 5
"""Clock ticks (usually 50 ms) after its start during which an empty environment may be an exec's
(kernels without the memory bounds in ``stat``)."""

_ENV_END = 48
"""Index of ``env_end`` (field 51 of ``/proc/<pid>/stat``) among the fields after the command name."""


def mid_exec(pid: int, environ: bytes | None = None) -> bool:
    """Whether ``pid`` is inside ``execve``: its new memory holds no arguments or environment yet.

    In that moment (after the starter of a command already saw it exec) ``/proc/<pid>/environ`` reads
    empty, so a marker it carries cannot be seen; a moment later it can. Kernel threads read so too, and
    are not asked. ``environ``: what the caller just read from ``/proc/<pid>/environ``, if it did.
    """
    try:
        if (read_proc(f"/proc/{pid}/environ") if environ is None else environ) != b"":
            return False
        if read_proc(f"/proc/{pid}/cmdline") == b"":
            return True
    except OSError:
        return False
    # Arguments already there, environment not yet. The kernel sets the new memory's argument bounds,
    # then its environment's: until ``env_end`` (stat field 51) is set it reads 0, while a finished exec
    # with an empty environment (``env -i``) has ``env_end == env_start``, both set. A process preempted
    # in that moment on a busy machine can stay there long after it started, so this is read, not timed.
    fields = _stat_fields(pid)
    if fields is None:
        return False
    if len(fields) > _ENV_END:
        try:
            env_start, env_end = int(fields[_ENV_END - 1]), int(fields[_ENV_END])
        except ValueError:
            return False
        return env_end == 0 or env_end < env_start
    # Kernels before 3.5 show no bounds: only a process that has just started is still settling.
    started = _started(fields)
    now = boot_ticks()
    return started is not None and now is not None and now - started <= _SETTLING_TICKS


def marker(pid: int, variable: str) -> str | None:
    """The value ``variable`` has in the environment ``pid`` was started with; ``None`` if unreadable."""
    try:
        environ = read_proc(f"/proc/{pid}/environ")
    except OSError:
        return None
    return environ_value(environ, variable)


def environ_value(environ: bytes, variable: str) -> str | None:
    """The value of ``variable`` in a raw ``/proc/<pid>/environ``; ``None`` if it is not there."""
    return _value(b"\0" + environ, b"\0" + variable.encode() + b"=")


def _young(fields: list[str], since: int | None) -> bool:
    if since is None or len(fields) < 20:
        return True
    try:
        return int(fields[19]) >= since - _MARGIN_TICKS
    except ValueError:
        return True


def _value(environ: bytes, wanted: bytes) -> str | None:
    at = environ.find(wanted)
    if at < 0:
        return None
    start = at + len(wanted)
    end = environ.find(b"\0", start)
    return environ[start : end if end >= 0 else len(environ)].decode("utf-8", "replace")


_FLAGS = 6
"""Where ``flags`` (field 9 of ``/proc/<pid>/stat``) sits after the command name."""
_PENDING = 28
"""Where ``signal`` (field 31: the signals pending for the main thread) sits after the command name."""
_PF_EXITING = 0x4
_PF_SIGNALED = 0x400
_SIGKILL_BIT = 1 << (9 - 1)
_SIGTERM_BIT = 1 << (15 - 1)


def dying(pid: int) -> bool:
    """Whether ``pid`` is already on its way out: a fatal signal reached it, or it is exiting.

    A process killed by a signal whose default action ends it (``SIGKILL``, or an unhandled ``SIGTERM``)
    has ``SIGKILL`` pending on its threads until it takes it, then the kernel's exiting flags set. Until
    its threads have all ended, it is still listed and not yet a zombie. ``False`` when it cannot be read.

    Between a thread taking that ``SIGKILL`` and the flags being set there is a moment where the stat
    line shows neither, long enough on a busy machine to be read; the signal sent to the process stays
    queued for the whole process (``ShdPnd`` in ``status``) until it is gone, so that is read then.
    """
    fields = _stat_fields(pid)
    if fields is None or len(fields) <= _PENDING:
        return False
    try:
        flags, pending = int(fields[_FLAGS]), int(fields[_PENDING])
    except ValueError:
        return False
    return bool(flags & (_PF_EXITING | _PF_SIGNALED) or pending & _SIGKILL_BIT) or _fatal_queued(pid)


def _fatal_queued(pid: int) -> bool:
    """Whether a signal that ends ``pid`` is queued for the whole process.

    That is ``SIGKILL``, or a ``SIGTERM`` it neither handles, ignores nor blocks.
    """
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except (OSError, ValueError):
        return False
    masks: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name in ("ShdPnd", "SigBlk", "SigIgn", "SigCgt"):
            with contextlib.suppress(ValueError):
                masks[name] = int(value.strip(), 16)
    shared = masks.get("ShdPnd", 0)
    kept = masks.get("SigBlk", 0) | masks.get("SigIgn", 0) | masks.get("SigCgt", 0)
    return bool(shared & _SIGKILL_BIT or (shared & _SIGTERM_BIT and not kept & _SIGTERM_BIT))


def start_time(pid: int) -> str | None:
    """An identity for ``pid`` that a recycled pid does not share; ``None`` when no such process runs.

    On Linux it is the start time in clock ticks since boot (field 22 of ``/proc/<pid>/stat``). Elsewhere
    it is ``"alive"`` for any running pid, so a recycled pid there looks like its owner (documented).
    """
    if has_procfs():
        fields = _stat_fields(pid)
        if fields is None or len(fields) < 20 or fields[0] == "Z":
            return None
        return fields[19]
    return "alive" if pid_alive(pid) else None
