"""Settings shared by the whole suite.

Hypothesis's defaults include two timing checks: a per-example deadline and the "input generation is
slow" health check. Both are timing thresholds, and the suite runs on shared, loaded machines where a
property that is correct can still miss them. Properties here check behaviour, never speed (speed is
measured by ``benchmarks/``), so the suite's profile turns both timing checks off and keeps every other
health check.

The ``marker`` fixture is shared by the tests that start processes meant to escape a trial, and
``closed_port`` by the tests of an endpoint nobody listens on.

A shell without job control starts its background commands with Ctrl-C ignored, and Python keeps
an ignored SIGINT ignored, in itself and in every program it starts: the tests of what trialbook does on
Ctrl-C would then test the shell's choice. The suite takes Ctrl-C back as it loads, before the workers
start, so it runs alike in a terminal, in CI and in the background.
"""

from __future__ import annotations

import signal
import socket
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.lifecycle.escapes import kill_survivors, unique_marker

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

settings.register_profile(
    "trialbook",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("trialbook")


@pytest.fixture
def marker() -> Iterator[str]:
    """A string no other process has in its command line, for a test's processes to carry.

    Whatever still carries it when the test ends is killed, by pid, so a failing test never leaks its
    sleeps into the next one. Tests name it in the processes they start (``exec -a``, an argument).
    """
    value = unique_marker()
    yield value
    kill_survivors(value)


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses every connection for as long as the test runs.

    A port found free and let go could be taken by another test's server meanwhile (the suite runs
    many at once), and an agent meant to find nobody would find a model answering. So the port stays
    bound here, never listening and without ``SO_REUSEADDR``: no other socket can bind it, the kernel
    hands it to no one, and a connection to it is refused.
    """
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        yield int(holder.getsockname()[1])
