"""Which trialbook process made a temp file or folder, and whether that process still runs.

Sandboxes and the temp files of atomic writes carry an owner tag in their names: the pid and, on Linux,
the process's start time (clock ticks since boot, field 22 of ``/proc/<pid>/stat``), so a pid the system
recycled does not pass for the owner. Without ``/proc`` (macOS) the start time is ``0`` and only whether
the pid is alive counts: a recycled pid keeps a left-over until that process ends too (documented).
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

__all__ = ["OWNER_PATTERN", "owner_gone", "owner_tag", "pid_alive", "start_time", "temp_prefix"]

OWNER_PATTERN = r"(?P<pid>\d+)_(?P<start>\d+)"
"""How an owner tag (``<pid>_<start>``) appears in a name."""

_TAG = re.compile(OWNER_PATTERN)


def start_time(pid: int) -> str | None:
    """``pid``'s start time in clock ticks on Linux, ``"0"`` elsewhere; ``None`` when it is not running."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
        return "0" if pid_alive(pid) else None
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2 :].split()
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return fields[19].decode("ascii")


def pid_alive(pid: object) -> bool:
    """Whether a process with this pid runs (ours or another user's); ``False`` for anything not a pid."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@cache
def _tag_for(pid: int) -> str:
    return f"{pid}_{start_time(pid) or '0'}"


def owner_tag() -> str:
    """``<pid>_<start>`` of this process (looked up again after a fork)."""
    return _tag_for(os.getpid())


def owner_gone(tag: str) -> bool:
    """Whether the process a tag names has ended (a tag that does not parse is never "gone")."""
    match = _TAG.fullmatch(tag)
    if match is None:
        return False
    pid, start = int(match["pid"]), match["start"]
    current = start_time(pid)
    return current is None or (start != "0" and current != start)


def temp_prefix(kind: str = "") -> str:
    """The prefix of a temp folder this process makes: ``trialbook-<pid>_<start>-<kind>``."""
    return f"trialbook-{owner_tag()}-{kind}"
