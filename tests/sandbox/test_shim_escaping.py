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


LONG_ARGUMENT = st.text(
    st.sampled_from(["a", "é", "\\", '"', "\n", "\t", "\r", "\x01", "\x1b", "\x7f", "€", "😀"]),
    min_size=500,
    max_size=3000,
)


@settings(max_examples=25, deadline=None)
@given(args=st.lists(LONG_ARGUMENT, min_size=1, max_size=3))
def test_long_arguments_round_trip_across_chunk_boundaries(sandbox: Sandbox, args: list[str]) -> None:
    # Longer than the 512-byte chunks the escaper works in, with escapes and multi-byte UTF-8 at the cuts.
    sandbox.call_log.write_bytes(b"")
    subprocess.run(["tool", *args], cwd=sandbox.workdir, env=sandbox.env, check=True)
    [call] = sandbox.read_call_log().calls
    assert call.argv == ("tool", *args)


@pytest.mark.parametrize("byte", ["\x01", '"', "\\", "\n", "é"])
def test_largest_argument_linux_takes_is_logged_whole(sandbox: Sandbox, byte: str) -> None:
    # One argument may hold up to 128 KiB; 100 KB of control bytes used to take the shim 20 s (quadratic
    # escaping). This checks the result is exact; benchmarks/shim_logging.py measures the time.
    argument = byte * (100_000 // len(byte.encode()))
    sandbox.call_log.write_bytes(b"")
    subprocess.run(
        ["tool", argument, "x" * 1000], cwd=sandbox.workdir, env=sandbox.env, check=True, timeout=120
    )
    [call] = sandbox.read_call_log().calls
    assert call.argv == ("tool", argument, "x" * 1000)


def test_many_arguments_are_logged_in_order(sandbox: Sandbox) -> None:
    args = [f"arg-{index}\x02" for index in range(5000)]
    sandbox.call_log.write_bytes(b"")
    subprocess.run(["tool", *args], cwd=sandbox.workdir, env=sandbox.env, check=True, timeout=120)
    [call] = sandbox.read_call_log().calls
    assert call.argv == ("tool", *args)
