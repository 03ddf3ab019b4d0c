"""Run the suite in parallel when pytest-xdist is there, and in one process when it is not.

Loaded from ``addopts`` (``-p tests.parallel``) instead of writing ``-n`` there: ``pytest -p no:xdist``
(one process, for a debugger) would otherwise stop at an option no plugin defines.

One worker more than the machine has cores: much of the suite waits on agent CLIs, ``act`` and git
processes, so a worker per core left about a third of the CPU idle. On the 2-core machine the suite
took 399 s with two workers and 300 s with three.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Add ``-n CORES+1 --dist loadfile`` unless xdist is off or the command line says how many."""
    if not early_config.pluginmanager.has_plugin("xdist"):
        return
    given = any(arg in ("-n", "--numprocesses") or arg.startswith(("-n", "--numprocesses=")) for arg in args)
    if not given:
        args[:0] = ["-n", str(workers()), "--dist", "loadfile"]


def workers() -> int:
    """The default number of workers: the cores this process may use, plus one."""
    return len(os.sched_getaffinity(0)) + 1
