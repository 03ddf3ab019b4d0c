"""Per-trial cgroup v2 groups, where the kernel lets trialbook make them (root, or a delegated subtree).

A cgroup is the one container a process cannot leave by itself: ``setsid``, double forks and a cleared
environment all stay inside, and ``cgroup.kill`` ends every member at once. It is used when trialbook's
own cgroup (from ``/proc/self/cgroup``) on the cgroup2 mount is writable; otherwise nothing here is used
and the supervisor's marker-and-tree sweep does the whole job. ``TRIALBOOK_CGROUP=off`` turns it off.

A command enters its trial's group itself, before it runs anything (:meth:`CgroupRoot.join_argv`):
Python cannot start a process inside a cgroup (``clone3`` with ``CLONE_INTO_CGROUP``), ``preexec_fn``
forces a slow ``fork`` and is unsafe beside threads, and a move by trialbook after the start loses the
race to a command that forks at once. A ``bash -c`` script (every agent script, literal step and check)
gets a first statement that moves the shell; any other command starts behind a ``sh`` prologue that
moves itself and then becomes the command (one more program start).

Moving a whole process (``cgroup.procs``) takes a lock for every process on the machine, which waits
for an RCU grace period (about 10 ms) unless the hierarchy is mounted with ``favordynmods``; moving only
the calling thread (``cgroup.threads``) within one threaded subtree does not. So trialbook makes its
folder of groups a threaded subtree where the kernel allows: it moves itself, once, into a threaded
``runner`` group there, its commands are born in it, and each enters its trial's threaded group by
moving its one thread. A threaded group refuses ``cgroup.kill``; its members are frozen
(``cgroup.freeze``, so none can fork meanwhile) and killed one by one. When the folder is removed,
trialbook and anything else born in ``runner`` go back to the cgroup they came from. Where the kernel
refuses a threaded subtree, commands move as whole processes.

A trial's group that is empty when the trial ends serves a later trial of the same run (a free list in
:class:`CgroupRoot`) instead of being removed and made again: a group holds nothing of a trial once its
members are gone, and one that is not empty when given back is removed, never handed out again.
"""

from __future__ import annotations

import contextlib
import functools
import os
import select
import shlex
import time
from collections.abc import Mapping
from pathlib import Path

from ._procfs import dying, read_proc, start_time

__all__ = ["CgroupRoot", "find_cgroup_root", "sweep_stale_roots"]

_JOIN = 'echo 0 >"$0" 2>/dev/null; exec "$@"'
"""A ``sh`` prologue that moves itself into the trial's group (``$0``: the file to write), then becomes
the real command."""

_RUNNER = "runner"
"""The threaded group trialbook itself moves into, so its commands can join theirs by thread."""

_SHELLS = frozenset({"bash", "sh", "dash"})


def _cgroup2_mount() -> Path | None:
    try:
        lines = Path("/proc/self/mountinfo").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return Path(left.split()[4])
    return None


def _own_cgroup() -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::"):
            return line[3:].strip()
    return None


class CgroupRoot:
    """A folder of trial groups made for this trialbook process inside its own cgroup."""

    def __init__(self, path: Path, *, threaded: bool = False) -> None:
        self.path = path
        self.threaded = threaded
        """Whether trialbook runs in the folder's threaded ``runner`` group and trial groups are threaded."""
        self._free: list[Path] = []
        """Groups given back empty by ended trials, for the next ones (callers hold one lock)."""

    def new_group(self) -> Path | None:
        """An empty group for one trial: one an ended trial gave back, else a new one (``None``: refused)."""
        if self._free:
            return self._free.pop()
        group = self.path / f"trial-{os.urandom(6).hex()}"
        try:
            group.mkdir()
        except OSError:
            return None
        if self.threaded and not _put(group / "cgroup.type", "threaded"):
            with contextlib.suppress(OSError):
                group.rmdir()
            return None
        return group

    def join_file(self, group: Path) -> Path:
        """The file a command writes ``0`` to, to enter ``group``: its thread, or its whole process."""
        return group / ("cgroup.threads" if self.threaded else "cgroup.procs")

    def give_back(self, group: Path, *, empty: bool) -> None:
        """An ended trial's group: kept for the next trial if ``empty``, otherwise removed.

        ``empty`` is what :meth:`reusable` said once the trial ended, read before the caller took its
        lock. Nothing of the ended trial joins the group later: a process enters its trial's group as its
        own first step, and the trial's end killed every process that could still take it.
        """
        if empty:
            self._free.append(group)
            return
        with contextlib.suppress(OSError):
            group.rmdir()  # refused while a member lives: :meth:`close` kills it and removes the group

    @staticmethod
    def join_argv(join: Path, argv: list[str], env: Mapping[str, str]) -> list[str]:
        """``argv`` changed so the process enters a group (``join``: see :meth:`join_file`) first.

        ``<shell> -c <script>`` keeps its shell and its script, behind one first statement that moves
        the shell (a builtin: no process of its own, and the script's line numbers stay as they were);
        where ``BASH_ENV`` would run a file before that statement, or for any other program, a ``sh``
        prologue moves itself and then becomes the command.
        """
        if (
            len(argv) >= 3
            and os.path.basename(argv[0]) in _SHELLS
            and argv[1] == "-c"
            and not env.get("BASH_ENV")
        ):
            return [argv[0], "-c", f"echo 0 2>/dev/null >{shlex.quote(str(join))}; {argv[2]}", *argv[3:]]
        return ["/bin/sh", "-c", _JOIN, str(join), *argv]

    @staticmethod
    def reusable(group: Path) -> bool:
        """Whether ``group`` is still there and has no member."""
        threads = _threads(group)
        return threads is not None and not threads

    @staticmethod
    def kill(
        group: Path, wait_s: float = 2.0, *, remove: bool = True, members: set[int] | None = None
    ) -> set[int]:
        """Kill every member of ``group``, wait until it is empty, and (with ``remove``) remove it.

        Returns the members that were alive when it looked, before anything was killed, and not already
        dying (a member of a command's process group, killed with it, may still be exiting): ``cgroup.kill``
        ends them all at once, so afterwards nobody is left to count. An empty group (the usual case at
        the end of a trial) costs one read; otherwise the wait ends when ``cgroup.events`` says the
        group is empty, with no polling interval. ``members`` collects every member seen, dying or not
        (to reap those the kernel hands to trialbook as their parents die).
        """
        found = _members(group)
        seen = members if members is not None else set()
        seen |= found
        if found:
            found = {pid for pid in found if _stray(pid)}
            deadline = time.monotonic() + wait_s
            frozen = False
            with _Events(group) as events:
                while True:
                    now = _members(group)
                    seen |= now
                    found |= {pid for pid in now if _stray(pid)}
                    if not now or time.monotonic() > deadline:
                        break
                    # cgroup.kill: Linux 5.14 and later, and not in a threaded group. Otherwise one by
                    # one, in a frozen group (Linux 5.2 and later) so none forks between the kills.
                    if not _put(group / "cgroup.kill", "1"):
                        frozen = frozen or _put(group / "cgroup.freeze", "1")
                        for member in now:
                            with contextlib.suppress(OSError):
                                os.kill(member, 9)
                    events.wait_empty(min(0.1, max(0.0, deadline - time.monotonic())))
            if frozen:
                _put(group / "cgroup.freeze", "0")  # a group handed to a later trial must not freeze it
        if remove:
            with contextlib.suppress(OSError):
                group.rmdir()
        return found

    def close(self) -> None:
        """Remove the folder of groups: the ones kept for reuse, and any a trial could not remove.

        First trialbook, and whatever else was born in its ``runner`` group, go back to the cgroup the
        folder is in (also for the folder of a trialbook process that is gone).
        """
        free, self._free = self._free, []
        for group in free:
            with contextlib.suppress(OSError):
                group.rmdir()
        _leave_runner(self.path)
        with contextlib.suppress(OSError):
            try:
                self.path.rmdir()  # the usual case: no group is left in it
                return
            except OSError:
                pass
            with os.scandir(self.path) as entries:
                groups = [
                    Path(entry.path)
                    for entry in entries
                    if entry.is_dir(follow_symlinks=False) and entry.name != _RUNNER
                ]
            for group in groups:
                self.kill(group, wait_s=0.5)
            self.path.rmdir()


def _enter_runner(path: Path) -> bool:
    """Make ``path`` a threaded subtree with trialbook in its ``runner`` group; ``False``: refused, undone."""
    runner = path / _RUNNER
    try:
        runner.mkdir(exist_ok=True)
    except OSError:
        return False
    if _put(runner / "cgroup.type", "threaded") and _put(runner / "cgroup.procs", str(os.getpid())):
        return True
    with contextlib.suppress(OSError):
        runner.rmdir()
    return False


def _leave_runner(path: Path) -> None:
    """Move every process in ``path``'s ``runner`` group back to ``path``'s parent, then remove it."""
    runner = path / _RUNNER
    home = path.parent / "cgroup.procs"
    for _ in range(3):  # a process born there meanwhile (another thread's command) moves on the next pass
        members = _members(runner)
        if not members:
            break
        for pid in members:
            _put(home, str(pid))
    with contextlib.suppress(OSError):
        runner.rmdir()


def _stray(pid: int) -> bool:
    """Whether a member is alive and was not already on its way out before the group was killed."""
    return start_time(pid) is not None and not dying(pid)


def _threads(group: Path) -> list[bytes] | None:
    """The thread ids ``group`` lists now; ``None`` when it cannot be read (it is gone, say)."""
    try:
        return read_proc(f"{group}/cgroup.threads").split()
    except OSError:
        return None


def _members(group: Path) -> set[int]:
    """The processes with a thread in ``group`` (``cgroup.procs`` cannot be read in a threaded group)."""
    try:
        raw = read_proc(f"{group}/cgroup.threads")
    except OSError:
        return set()
    pids: set[int] = set()
    for tid in raw.split():
        if not tid.isdigit():
            continue
        try:
            status = read_proc(f"/proc/{int(tid)}/status")
        except OSError:
            continue  # gone since the listing
        start = status.find(b"\nTgid:")
        if start >= 0:
            pids.add(int(status[start + 6 : status.index(b"\n", start + 1)]))
    return pids


def _put(path: Path, text: str) -> bool:
    """Write ``text`` to a cgroup file; ``False`` when the kernel refuses (or the file is missing)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, text.encode())
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


class _Events:
    """``cgroup.events`` opened for ``poll``: the kernel wakes it when ``populated`` changes."""

    def __init__(self, group: Path) -> None:
        self._path = str(group / "cgroup.events")
        self._fd: int | None = None

    def __enter__(self) -> _Events:
        with contextlib.suppress(OSError):
            self._fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
        return self

    def __exit__(self, *_: object) -> None:
        if self._fd is not None:
            os.close(self._fd)

    def wait_empty(self, timeout_s: float) -> None:
        """Return once the group is empty, or after ``timeout_s``."""
        if self._fd is None:
            time.sleep(min(timeout_s, 0.01))
            return
        poller = select.poll()
        poller.register(self._fd, select.POLLPRI)
        deadline = time.monotonic() + timeout_s
        while True:
            with contextlib.suppress(OSError):
                os.lseek(self._fd, 0, os.SEEK_SET)
                if b"populated 0" in os.read(self._fd, 256):
                    return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            poller.poll(left * 1000)


@functools.cache
def _base() -> Path | None:
    # Once per process: the mount table and trialbook's own cgroup do not change under a run.
    mount, own = _cgroup2_mount(), _own_cgroup()
    if mount is None or own is None:
        return None
    return mount / own.lstrip("/")


def sweep_stale_roots() -> list[Path]:
    """Kill what is left in, and remove, the trial groups of trialbook processes that are gone."""
    base = _base()
    removed: list[Path] = []
    if base is None:
        return removed
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            name = entry.name
            if not name.startswith("trialbook-") or not name[10:].isdigit():
                continue
            try:
                os.kill(int(name[10:]), 0)
                continue  # its process still runs
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            CgroupRoot(entry).close()
            if not entry.exists():
                removed.append(entry)
    return removed


def find_cgroup_root() -> CgroupRoot | None:
    """Make this process's folder of trial groups when cgroup v2 allows it; ``None`` otherwise."""
    if os.environ.get("TRIALBOOK_CGROUP", "").lower() in {"0", "off", "no", "false"}:
        return None
    base = _base()
    if base is None:
        return None
    if not os.access(base / "cgroup.procs", os.W_OK):
        return None
    path = base / f"trialbook-{os.getpid()}"
    try:
        path.mkdir(exist_ok=True)
    except OSError:
        return None
    if not os.access(path / "cgroup.procs", os.W_OK):
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return CgroupRoot(path, threaded=_enter_runner(path))
