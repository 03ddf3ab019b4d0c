"""The shims escape JSON in bash; any argument text must come back from the log exactly as it was passed."""

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.sandbox import Sandbox, ShimConfig, create_sandbox

# Anything an argv can carry: every character but NUL (and lone surrogates, which are not text).
ARGUMENT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=40)


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    root = tmp_path_factory.mktemp("trials")
    shims = [ShimConfig("tool", "stub", None)]
    with create_sandbox(root=root, template=None, shims=shims, secrets={}, extra_env={}) as box:
        yield box


@settings(max_examples=80, deadline=None)
@given(
    args=st.lists(ARGUMENT, max_size=5),
    folder=ARGUMENT.filter(lambda s: s not in ("", ".", "..") and "/" not in s),
)
def test_any_argument_text_round_trips_through_the_log(
    sandbox: Sandbox, args: list[str], folder: str
) -> None:
    sandbox.call_log.write_bytes(b"")
    cwd = Path(sandbox.workdir) / folder
    cwd.mkdir(exist_ok=True)
    subprocess.run(["tool", *args], cwd=cwd, env=sandbox.env, check=True)
    log = sandbox.read_call_log()
    assert log.problems == ()
    [call] = log.calls
    assert call.argv == ("tool", *args)
    assert call.cwd == str(cwd)
