"""What every command shares: error handling with documented exit codes, options with env vars, output."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..errors import TrialbookError

__all__ = ["TrialbookGroup", "env_option", "paths_argument"]

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
