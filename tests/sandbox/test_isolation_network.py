"""A trial's own network under bwrap: refused connections are recorded and shown; the agent's own are not."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.sandbox._network import Endpoint, endpoint_of, refused_connections

from .isolated import run_isolated

CONNECT = (
    "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected > net.txt || echo refused > net.txt\n"
    "python3 -c \"import socket; s = socket.create_server(('127.0.0.1', 0)); "
    'socket.create_connection(s.getsockname()).close()" && echo own > own.txt\n'
    "touch started"
)


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_a_loopback_port_of_the_host_is_refused_recorded_and_shown_under_bwrap(
    tmp_path: Path, listening: int, isolation: str
) -> None:
    # No sandbox.network: a script agent's own default under isolation is none.
    if isolation == "bwrap":
        ensure("bubblewrap")
    net = "{file_contains: {path: net.txt, pattern: refused}}"
    run = run_isolated(
        tmp_path, CONNECT.format(port=listening), isolation, checks=f"[{net}, file_exists: own.txt]"
    )
    result = run.test["executions"][0]["result"]
    if isolation == "none":  # the host's port answers, and nothing watched
        assert run.done.returncode == 1, run.done.stdout + run.done.stderr
        assert "network_refused" not in result
        return
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    # Refused and recorded; the agent's own server inside its namespace worked and is not listed.
    assert result["network_refused"] == [{"host": "127.0.0.1", "port": listening}]
    assert f"network refused (1): 127.0.0.1:{listening}" in run.done.stdout
    # The watcher ends with the agent: nothing of the trial is left running, its log named in its argv.
    root = Path(result["working_directory"]).parent
    alive = subprocess.run(["pgrep", "-f", f"{root}/outside"], capture_output=True, text=True, check=False)
    assert alive.stdout == ""


def test_endpoints_are_read_from_urls_with_their_default_ports() -> None:
    assert endpoint_of("https://api.anthropic.com") == Endpoint("api.anthropic.com", 443)
    assert endpoint_of("http://127.0.0.1:8080/v1") == Endpoint("127.0.0.1", 8080)
    assert endpoint_of("http://[::1]/v1") == Endpoint("::1", 80)
    assert Endpoint("api.anthropic.com", 443).named and not Endpoint("::1", 80).named
    with pytest.raises(ValueError, match="not an http"):
        endpoint_of("ftp://x")


def test_the_refusal_log_is_read_strictly_and_unknown_without_a_watch(tmp_path: Path) -> None:
    assert refused_connections(tmp_path) is None  # no network of its own: nothing watched
    (tmp_path / "outside/net").mkdir(parents=True)
    assert refused_connections(tmp_path) == ()
    lines = [
        '{"host": "10.0.0.2", "port": 53}',
        "torn",
        '{"host": 1, "port": 2}',
        '{"host": "a", "port": true}',
    ]
    (tmp_path / "outside/network.jsonl").write_text("\n".join([*lines, lines[0]]) + "\n")
    assert [(c.host, c.port) for c in refused_connections(tmp_path) or ()] == [("10.0.0.2", 53)]
