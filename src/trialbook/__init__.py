"""trialbook: find out whether the prompts you ship still work when real coding agents follow them.

The public Python API: ``define_eval`` and the assertions for ``*.eval.py`` files, ``script_agent`` for
custom agents, and ``run`` / ``RunOptions`` — the library call behind ``trialbook eval``.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("trialbook")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0+unknown"

from .agents import AgentSpec, script_agent
from .assertions import (
    assert_that,
    file_contains,
    file_exists,
    not_ran,
    ran,
    ran_in_order,
    succeeds,
)
from .runner import RunOptions, RunReport, run
from .spec import define_eval

__all__ = [
    "AgentSpec",
    "RunOptions",
    "RunReport",
    "__version__",
    "assert_that",
    "define_eval",
    "file_contains",
    "file_exists",
    "not_ran",
    "ran",
    "ran_in_order",
    "run",
    "script_agent",
    "succeeds",
]
