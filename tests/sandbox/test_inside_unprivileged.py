"""The trial's first process as a runner that is not root (GitHub's runners): rights, layers, network, uid.

bubblewrap then makes the trial's user namespace itself, and ``_inside`` starts as root of it, mounts,
and becomes the runner's uid again before the agent runs. Run from root, dropping to a plain uid with
``setpriv``; the folder the plain user works in is a fresh one under /tmp, given to that user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.sandbox._isolation import INSIDE_RIGHTS, inside_source

UID = 1000

AGENT = (
    "id -u; grep -h ^Cap /proc/self/status | tr -d '\\t'; "
    "echo x > /etc/trialbook-unprivileged && echo wrote; "
    "(exec 3<>/dev/tcp/127.0.0.1/9) 2>/dev/null || echo refused"
)


@pytest.fixture
def plain_folder() -> Iterator[Path]:
    if os.getuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run as a plain user")
    folder = Path(tempfile.mkdtemp(prefix="trialbook-unprivileged-"))
    os.chown(folder, UID, UID)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


def test_a_plain_runner_gets_its_layers_network_watch_and_own_uid_with_no_right_left(
    plain_folder: Path,
) -> None:
    bwrap = ensure("bubblewrap")
    up, work, log = plain_folder / "up", plain_folder / "work", plain_folder / "network.jsonl"
    rights = [flag for right in INSIDE_RIGHTS for flag in ("--cap-add", right)]
    argv = ["setpriv", "--reuid", str(UID), "--regid", str(UID), "--clear-groups", "--", str(bwrap)]
    argv += ["--unshare-user", "--uid", "0", "--gid", "0", "--unshare-pid", "--unshare-net", *rights]
    argv += [
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--bind",
        str(plain_folder),
        str(plain_folder),
    ]
    argv += ["/usr/bin/python3", "-I", "-S", "-c", inside_source(), "layer", "/etc", str(up), str(work)]
    argv += ["log", str(log), "user", str(UID), str(UID), "--", "bash", "-c", AGENT]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split()
    assert lines[0] == str(UID)  # the runner's own uid, as without isolation
    assert all(line.endswith("0000000000000000") for line in lines[1:6]), lines  # no right left
    assert lines[6:] == ["wrote", "refused"]
    assert (up / "trialbook-unprivileged").read_text() == "x\n" and not Path(
        "/etc/trialbook-unprivileged"
    ).exists()
    assert log.read_text() == '{"host": "127.0.0.1", "port": 9}\n'
