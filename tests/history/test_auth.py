"""Credentials against a real smart-HTTP server with Basic auth (git http-backend on loopback)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from trialbook.history import DEFAULT_BRANCH, GitBranchStore, HistoryAuthError
from trialbook.history._auth import MAX_CREDENTIAL_CALLS, Callbacks

from .conftest import Remotes
from .helpers import git, git_env, line
from .http_git import Seen, receive_pack_enabled, serve

TOKEN = "ghs_s3cr3tTokenValue123"


@pytest.fixture
def http(remotes: Remotes, user_repo: Path, home: Path) -> Iterator[tuple[str, Seen]]:
    receive_pack_enabled(remotes.bare)
    with serve(remotes.bare.parent, "x-access-token", TOKEN, git_env(home)) as (base, seen):
        yield f"{base}origin.git", seen


def _clone(tmp_path: Path, remotes: Remotes, url: str) -> Path:
    clone = tmp_path / "ci"
    git(tmp_path, "clone", "-q", "--single-branch", "-b", "main", str(remotes.bare), str(clone))
    git(clone, "remote", "set-url", "origin", url)
    return clone


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def test_token_is_sent_as_x_access_token(tmp_path: Path, remotes: Remotes, http: tuple[str, Seen]) -> None:
    url, seen = http
    clone = _clone(tmp_path, remotes, url)
    written = line("x")
    with GitBranchStore(clone, token=TOKEN) as store:
        store.append([written])
        assert store.sync().action == "pushed"
    assert _basic("x-access-token", TOKEN) in seen.authorizations
    shown = git(remotes.bare, "show", f"{DEFAULT_BRANCH}:history/x.jsonl")
    assert json.loads(shown)["run_id"] == written.run_id
    assert TOKEN not in (clone / ".git" / "config").read_text()


def test_a_wrong_token_stops_after_the_cap_and_is_never_echoed(
    tmp_path: Path, remotes: Remotes, http: tuple[str, Seen]
) -> None:
    url, seen = http
    clone = _clone(tmp_path, remotes, url)
    wrong = "ghs_wrongTokenValue987"
    with GitBranchStore(clone, token=wrong) as store:
        store.append([line("x")])
        with pytest.raises(HistoryAuthError) as caught:
            store.sync()
    message = str(caught.value)
    assert "rejected the credentials" in message
    assert wrong not in message
    assert TOKEN not in message
    tried = [auth for auth in seen.authorizations if auth == _basic("x-access-token", wrong)]
    assert len(tried) == MAX_CREDENTIAL_CALLS


def test_checkout_extraheader_is_used_when_no_token_is_given(
    tmp_path: Path, remotes: Remotes, http: tuple[str, Seen]
) -> None:
    url, seen = http
    clone = _clone(tmp_path, remotes, url)
    # actions/checkout v6 keeps the header in a separate file pulled in by an include.
    included = tmp_path / "checkout-credentials.config"
    encoded = base64.b64encode(f"x-access-token:{TOKEN}".encode()).decode()
    prefix = url.rsplit("/", 1)[0] + "/"
    included.write_text(f'[http "{prefix}"]\n\textraheader = AUTHORIZATION: basic {encoded}\n')
    git(clone, "config", "include.path", str(included))
    with GitBranchStore(clone) as store:
        store.append([line("x")])
        assert store.sync().action == "pushed"
    assert seen.refused == 0  # sent up front: no 401 round trip, no credentials callback


def test_no_token_and_no_header_is_a_clear_auth_error(
    tmp_path: Path, remotes: Remotes, http: tuple[str, Seen]
) -> None:
    url, _seen = http
    clone = _clone(tmp_path, remotes, url)
    with GitBranchStore(clone) as store:
        store.append([line("x")])
        with pytest.raises(HistoryAuthError, match="has no token"):
            store.sync()


def test_callback_cap_and_credential_type() -> None:
    from pygit2.enums import CredentialType

    callbacks = Callbacks(token=TOKEN, extraheader=None, url="https://x:" + TOKEN + "@github.com/o/r")
    allowed = CredentialType.USERPASS_PLAINTEXT
    first = callbacks.credentials("https://github.com/o/r", None, allowed)
    assert first.credential_tuple == ("x-access-token", TOKEN)
    callbacks.credentials("https://github.com/o/r", None, allowed)
    with pytest.raises(HistoryAuthError) as caught:
        callbacks.credentials("https://github.com/o/r", None, allowed)
    assert TOKEN not in str(caught.value)
    assert "https://github.com/o/r" in str(caught.value)
    assert callbacks.custom_headers() is None  # an explicit token wins over any extraheader


def test_the_token_never_shows_in_a_repr(tmp_path: Path, remotes: Remotes, http: tuple[str, Seen]) -> None:
    url, _seen = http
    clone = _clone(tmp_path, remotes, url)
    with GitBranchStore(clone, token=TOKEN) as store:
        assert store.remote is not None
        assert TOKEN not in repr(store.remote)
        assert TOKEN not in repr(vars(store))
