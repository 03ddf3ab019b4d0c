"""A signal that arrives while trialbook is blocked writing to stderr is still handled, and says so.

Python runs a signal handler inside a write that a full pipe interrupted, with that stream's buffer
still locked: a handler that wrote to the same ``sys.stderr`` raised "reentrant call" in the middle of
the run's own output. Here a process fills its stderr pipe (the test reads nothing until it is full, so
the process is blocked in a write), the test sends SIGINT, then reads everything back.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

CHILD = textwrap.dedent(
    """\
    import sys
    from trialbook.runner._cancel import handle_signals

    with handle_signals() as cancel:
        while not cancel.requested:
            sys.stderr.write("x" * 999 + "\\n")
    print("cancelled by", cancel.signal_name, flush=True)
    """
)
F_GETPIPE_SZ = 1032
PIPE_BUF = 4096


def _blocked_writing(pid: int, fd: int, capacity: int) -> bool:
    """The child sleeps with its pipe all but full: its only place to sleep is a write to that pipe."""
    queued = int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return queued > capacity - PIPE_BUF and state == "S"


def test_a_signal_during_a_blocked_write_to_stderr_is_handled_and_said() -> None:
    # Unbuffered or not, stderr stays a buffered writer here: as on a user's terminal or a CI log.
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert child.stderr is not None
    err = child.stderr.fileno()
    capacity = fcntl.fcntl(err, F_GETPIPE_SZ)
    deadline = time.monotonic() + 60
    while not _blocked_writing(child.pid, err, capacity):  # a state to reach, not a pause
        assert child.poll() is None and time.monotonic() < deadline, "the child never filled its pipe"
        time.sleep(0.01)
    child.send_signal(signal.SIGINT)
    out, errors = child.communicate(timeout=60)
    text = errors.decode()
    assert child.returncode == 0, text[-2000:]
    assert out.decode() == "cancelled by SIGINT\n"
    assert "reentrant" not in text and "Traceback" not in text, text[-2000:]
    assert "trialbook: SIGINT: stopping the running trials and writing what finished" in text
