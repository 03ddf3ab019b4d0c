"""What every command shares: error handling with documented exit codes, options with env vars, output."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .._util.fsutil import atomic_write_text
from ..errors import TrialbookError

__all__ = [
    "DEFAULT_HISTORY_DIR",
    "TrialbookGroup",
    "env_option",
    "history_place",
    "paths_argument",
    "rescore_from_option",
]

DEFAULT_HISTORY_DIR = ".trialbook/history"
"""Where history lives when no option says: beside the kept runs, so a local user's second run is cached,
and ``history``, ``list`` and forecasts work without options. CI names its branch instead."""

F = TypeVar("F", bound=Callable[..., Any])


class TrialbookGroup(click.Group):
    """A group that turns trialbook's own errors into a message and their exit code, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a :class:`TrialbookError` prints ``error: …`` and exits with its code."""
        try:
            return super().invoke(ctx)
        except TrialbookError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(exc.exit_code)


def env_option(*decls: str, **attrs: Any) -> Callable[[F], F]:
    """A click option that ``TRIALBOOK_<OPTION>`` also sets, shown in ``--help``."""
    long = next(d for d in decls if d.startswith("--"))
    name = long[2:].split("/")[0].replace("-", "_").upper()
    attrs.setdefault("envvar", f"TRIALBOOK_{name}")
    attrs.setdefault("show_envvar", True)
    return click.option(*decls, **attrs)


def paths_argument(default: str = "evals") -> Callable[[F], F]:
    """Eval files or folders; ``evals/`` when none are given."""
    return click.argument(
        "paths", nargs=-1, type=click.Path(path_type=str), metavar=f"[PATHS]... (default: {default})"
    )


def history_place(
    history_dir: str | None, history_branch: str | None, *, recording: bool = False
) -> tuple[str | None, str | None]:
    """``--history-dir`` and ``--history-branch`` as given, or the default folder when neither is.

    Every command that reads or writes history goes through here, so all of them agree on where the
    default history is. A command that records (``recording``) makes the default folder with a
    ``.gitignore`` of its own (local history is the user's record, never a change ``git status`` shows);
    under ``CI=true`` it keeps none, as a CI workspace is thrown away: CI names its branch.
    """
    if history_dir or history_branch is not None:
        return history_dir or None, history_branch
    if recording:
        if os.environ.get("CI", "").lower() == "true":
            return None, None
        folder = Path(DEFAULT_HISTORY_DIR)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / ".gitignore").exists():
            atomic_write_text(folder / ".gitignore", _HISTORY_IGNORE)
    return DEFAULT_HISTORY_DIR, None


_HISTORY_IGNORE = "# written by trialbook: local history, kept out of commits\n*\n"


def rescore_from_option(help_text: str) -> Callable[[F], F]:
    """``--rescore-from DIR`` (repeatable): earlier run folders whose recorded trials may be re-checked."""
    return env_option(
        "--rescore-from", multiple=True, type=click.Path(file_okay=False), metavar="DIR", help=help_text
    )
