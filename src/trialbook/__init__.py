"""trialbook: find out whether the prompts you ship still work when real coding agents follow them.

The public Python API: ``define_eval`` and the assertions for ``*.eval.py`` files, ``script_agent`` for
custom agents, and ``run`` / ``RunOptions`` — the library call behind ``trialbook eval``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
"""The one place the version is written: the build reads it from here (pyproject.toml). A constant, not
read through ``importlib.metadata``, whose import cost every command about 60 ms of CPU."""

if TYPE_CHECKING:
    from collections.abc import Callable

    from .agents import AgentSpec, script_agent
    from .assertions import (
        assert_that,
        file_contains,
        file_exists,
        loaded,
        not_ran,
        ran,
        ran_in_order,
        skill_used,
        succeeds,
    )
    from .evalfiles import define_eval
    from .runner import RunOptions, RunReport, run

# The public names are loaded on first use, not on ``import trialbook``: pytest imports the plugin
# (``trialbook.pytest_plugin``) in every session of every project that has trialbook installed, and those
# sessions should not pay for the runner, git access or YAML parsing they never use.
_LAZY = {
    "AgentSpec": "agents",
    "script_agent": "agents",
    "assert_that": "assertions",
    "file_contains": "assertions",
    "file_exists": "assertions",
    "loaded": "assertions",
    "not_ran": "assertions",
    "ran": "assertions",
    "ran_in_order": "assertions",
    "skill_used": "assertions",
    "succeeds": "assertions",
    "RunOptions": "runner",
    "RunReport": "runner",
    "run": "runner",
    "define_eval": "evalfiles",
}


def _lazy_exports(
    package: str, table: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A package's ``__getattr__`` and ``__dir__`` that import each name of ``table`` on first use.

    ``table`` maps a public name to the submodule defining it. The packages whose import must stay
    cheap (this one, ``history``, ``select``) share this; it lives here because this module is loaded
    anyway, so sharing it costs no extra module in every pytest session.
    """
    import sys

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        from importlib import import_module

        value = getattr(import_module(f".{module}", package), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *table})

    return __getattr__, __dir__


__getattr__, _ = _lazy_exports(__name__, _LAZY)


__all__ = [
    "AgentSpec",
    "RunOptions",
    "RunReport",
    "__version__",
    "assert_that",
    "define_eval",
    "file_contains",
    "file_exists",
    "loaded",
    "not_ran",
    "ran",
    "ran_in_order",
    "run",
    "script_agent",
    "skill_used",
    "succeeds",
]
