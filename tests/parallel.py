"""Run the suite in parallel when pytest-xdist is there, and in one process when it is not.

Loaded from ``addopts`` (``-p tests.parallel``) instead of writing ``-n auto`` there: ``pytest -p
no:xdist`` (one process, for a debugger) would otherwise stop at an option no plugin defines.
"""

from __future__ import annotations

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    """Add ``-n auto --dist loadfile`` unless xdist is off or the command line says how many."""
    if not early_config.pluginmanager.has_plugin("xdist"):
        return
    given = any(arg in ("-n", "--numprocesses") or arg.startswith(("-n", "--numprocesses=")) for arg in args)
    if not given:
        args[:0] = ["-n", "auto", "--dist", "loadfile"]
