"""``trialbook view``: loopback only, serves the page and the run's raw files, stops cleanly on Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.viewer.conftest import run_cli

COMMAND = [sys.executable, "-c", "from trialbook.cli import main; main()", "view"]


def _listening_hosts(port: int) -> set[str]:
    """Local addresses listening on ``port``, read from the kernel's socket tables."""
    hosts = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if int(hex_port, 16) == port and state == "0A":  # LISTEN
                hosts.add(address)
    return hosts


@pytest.fixture
def served(example_run: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    proc = subprocess.Popen(
        [*COMMAND, str(example_run)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.stderr else "")
        yield proc, line.split(" at ")[1].split()[0]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()  # reap it and close both pipes


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_serves_the_page_and_raw_files_on_loopback_only(served: tuple[subprocess.Popen[str], str]) -> None:
    _, address = served
    port = int(address.rstrip("/").rsplit(":", 1)[1])
    assert _listening_hosts(port) == {"0100007F"}  # 127.0.0.1, and nothing on other interfaces
    status, body = get(address)
    assert status == 200
    assert b"trialbook report" in body
    assert b'"href":"files/evals/deploy/literal/trial-1/result.json"' in body
    status, body = get(address + "files/evals/deploy/literal/trial-1/result.json")
    assert status == 200
    assert b'"schema_version"' in body
    for escape in ("files/../../../etc/passwd", "files/%2e%2e/%2e%2e/etc/passwd", "files/", "nothing"):
        assert get(address + escape)[0] == 404, escape


def test_ctrl_c_stops_it_cleanly(served: tuple[subprocess.Popen[str], str]) -> None:
    proc, address = served
    assert get(address)[0] == 200
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "stopped" in out
    assert "Traceback" not in err
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", int(address.rstrip("/").rsplit(":", 1)[1])), timeout=2)


def test_sigterm_stops_it_too(served: tuple[subprocess.Popen[str], str]) -> None:
    proc, _ = served
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=10)
    assert proc.returncode == 0


def test_a_busy_port_is_a_clear_error(example_run: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli("view", str(example_run), "--port", str(port))
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output


def test_no_run_is_a_clear_error(tmp_path: Path) -> None:
    result = run_cli("report", str(tmp_path), "--html", str(tmp_path / "r.html"))
    assert result.exit_code == 2
    assert "no suite.json found" in result.output
    assert ".trialbook/runs/latest/suite.json" in result.output
    assert not (tmp_path / "r.html").exists()
