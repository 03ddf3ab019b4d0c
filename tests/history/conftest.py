"""Real git for the history tests: repositories, a bare remote, and a git daemon, all under tmp_path."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.history.helpers import git, git_env


@dataclass
class Remotes:
    """A bare repository reachable both as a path and through git daemon."""

    bare: Path
    path_url: str
    daemon_url: str


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def daemon_root(tmp_path: Path) -> Path:
    root = tmp_path / "served"
    root.mkdir()
    return root


@pytest.fixture
def git_daemon(daemon_root: Path, home: Path) -> Iterator[str]:
    """``git://127.0.0.1:<port>/`` serving every repository under ``daemon_root`` with push enabled."""
    for _ in range(5):
        port = _free_port()
        proc = subprocess.Popen(
            [
                "git",
                "daemon",
                "--reuseaddr",
                f"--base-path={daemon_root}",
                "--export-all",
                "--enable=receive-pack",
                "--listen=127.0.0.1",
                f"--port={port}",
                str(daemon_root),
            ],
            env=git_env(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        if _wait_accepting(port, proc):
            break
        _stop(proc)
    else:
        pytest.fail("git daemon did not start on 127.0.0.1")
    try:
        yield f"git://127.0.0.1:{port}/"
    finally:
        _stop(proc)


@pytest.fixture
def remotes(daemon_root: Path, git_daemon: str, home: Path) -> Remotes:
    """An empty bare repository (branch main) served by path and by git daemon."""
    bare = daemon_root / "origin.git"
    git(home, "init", "--bare", "-q", "-b", "main", str(bare))
    return Remotes(bare=bare, path_url=str(bare), daemon_url=f"{git_daemon}origin.git")


@pytest.fixture
def user_repo(tmp_path: Path, home: Path, remotes: Remotes) -> Path:
    """A user's repository with one commit on main, pushed to the bare remote (origin = path URL)."""
    work = tmp_path / "work"
    git(home, "init", "-q", "-b", "main", str(work))
    (work / "README.md").write_text("# project\n")
    (work / "src").mkdir()
    (work / "src" / "app.py").write_text("print('hi')\n")
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "initial")
    git(work, "remote", "add", "origin", remotes.path_url)
    git(work, "push", "-q", "origin", "main")
    return work


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_accepting(port: int, proc: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)
