"""Bounded network: timeouts on a remote that never answers, no retry of a permanent refusal.

The remotes are real: a loopback listener that accepts connections and never says a word, a closed port,
and ``git http-backend`` behind a small HTTP server with a pre-receive hook that refuses every push.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from trialbook.history import (
    DEFAULT_BRANCH,
    GitBranchStore,
    HistoryFetchError,
    HistoryPushError,
    NetworkTimeouts,
)
from trialbook.history._network import is_race

from .conftest import Remotes
from .helpers import git, git_env, line
from .http_git import receive_pack_enabled, serve

TOKEN = "ghs_n3tw0rkTokenValue456"


@pytest.fixture
def silent_remote() -> Iterator[str]:
    """``http://127.0.0.1:<port>/origin.git``: a listener that accepts every connection, never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)  # kept open, never read or written

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/origin.git"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


def _point_origin(repo: Path, url: str) -> None:
    git(repo, "remote", "set-url", "origin", url)


@pytest.mark.parametrize("push", [True, False])
def test_a_remote_that_never_answers_fails_the_sync_at_the_idle_timeout(
    user_repo: Path, silent_remote: str, push: bool
) -> None:
    _point_origin(user_repo, silent_remote)
    timeouts = NetworkTimeouts(connect_s=2, idle_s=1)
    with GitBranchStore(user_repo, push=push, timeouts=timeouts, max_attempts=30) as store:
        store.append([line("x")])
        with pytest.raises(HistoryFetchError) as caught:
            store.sync()
    message = str(caught.value)
    assert "could not fetch history branch 'trialbook-results' from remote 'origin'" in message
    assert "timed out" in message
    assert "--git-timeout" in message and "TRIALBOOK_GIT_TIMEOUT" in message


def test_a_closed_port_is_not_retried(user_repo: Path, closed_port: int) -> None:
    _point_origin(user_repo, f"http://127.0.0.1:{closed_port}/origin.git")
    with (
        GitBranchStore(user_repo, push=False, max_attempts=30) as store,
        pytest.raises(HistoryFetchError) as caught,
    ):
        store.sync()
    assert "Connection refused" in str(caught.value) or "failed to connect" in str(caught.value)


@pytest.fixture
def refusing_http(remotes: Remotes, home: Path) -> Iterator[tuple[str, Path]]:
    """An HTTP remote whose pre-receive hook refuses every push, counting how often it ran."""
    receive_pack_enabled(remotes.bare)
    ran = remotes.bare / "hook-runs"
    hook = remotes.bare / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\necho run >> '{ran}'\necho 'pushes to history need a review' >&2\nexit 1\n")
    hook.chmod(0o755)
    with serve(remotes.bare.parent, "x-access-token", TOKEN, git_env(home)) as (base, _seen):
        yield f"{base}origin.git", ran


def test_a_hook_refusal_over_http_fails_after_one_attempt_with_its_message(
    user_repo: Path, refusing_http: tuple[str, Path]
) -> None:
    url, ran = refusing_http
    _point_origin(user_repo, url)
    kept = line("x")
    with GitBranchStore(user_repo, token=TOKEN, max_attempts=30) as store:
        store.append([kept])
        with pytest.raises(HistoryPushError) as caught:
            store.sync()
        assert store.read("x") == [kept]
    message = str(caught.value)
    assert ran.read_text().splitlines() == ["run"]  # one push, one hook run: no retry
    assert "pushes to history need a review" in message
    assert "pre-receive hook declined" in message
    assert "Not retried" in message
    assert TOKEN not in message
    assert git(user_repo, "rev-parse", DEFAULT_BRANCH).strip() in message


@pytest.mark.parametrize(
    ("message", "race"),
    [
        ("refs/heads/x moved on the remote", True),
        ("failed to lock file 'refs/heads/x.lock' for writing", True),
        ("cannot push because a reference that you are trying to update on the remote contains commits "
         "that are not present locally.", True),
        ("refs/heads/x: failed to update ref", True),
        ("error: cannot lock ref 'refs/heads/x': is at 4211cfc3f956f74c6f6d39e50d14038418a9a711 "
         "but expected 4addd9c51677dae73592be1ac5ef587b16f1e12b", True),
        ("refs/heads/x: pre-receive hook declined", False),
        ("refs/heads/x: protected branch hook declined", False),
        ("unexpected http status code: 403", False),
        ("could not read from socket: timed out", False),
        ("failed to connect to 127.0.0.1: Connection refused", False),
    ],
)  # fmt: skip
def test_only_races_are_retried(message: str, race: bool) -> None:
    assert is_race(message) is race


def test_eval_with_no_push_says_the_remote_did_not_answer_and_still_runs(
    user_repo: Path, silent_remote: str, home: Path
) -> None:
    _point_origin(user_repo, silent_remote)
    evals = user_repo / "evals"
    evals.mkdir()
    (evals / "x.eval.yaml").write_text("prompt_text: say hi\nagents: [literal]\n")
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("trialbook")),
            "eval",
            "--history-branch",
            DEFAULT_BRANCH,
            "--no-push",
            "--git-timeout",
            "1",
            "--results-dir",
            str(user_repo.parent / "results"),
        ],
        cwd=user_repo,
        env={**git_env(home), "CI": "true"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    warnings = [text for text in done.stderr.splitlines() if text.startswith("warning: history:")]
    assert len(warnings) == 1, done.stderr
    assert "timed out" in warnings[0] and "planning with the local history only" in warnings[0]
