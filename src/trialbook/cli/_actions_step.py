"""Commands the GitHub Action runs as its steps: a usage error there reaches the job summary too.

Click reports a bad option (an action input passed straight through, such as ``shard: 2of4``) on stderr
and exits 2, before the command's own code runs; in a workflow run that message is buried in the log.
These commands hand such an error to a ``stopped`` callback first, which says it where people look.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

__all__ = ["ActionsStepCommand", "probe_option"]

_GIVEN = "trialbook.actions_step.args"


class ActionsStepCommand(click.Command):
    """A command that calls ``stopped(args, message)`` before a usage error ends it (exit code 2)."""

    def __init__(self, *args: Any, stopped: Callable[[Sequence[str], str], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stopped = stopped

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        """Parse ``args``; a bad option or value is reported through ``stopped`` before it is raised."""
        given = list(args)
        try:
            ctx = super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            self._stopped(given, exc.format_message())
            raise
        ctx.meta[_GIVEN] = given
        return ctx

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a usage error it raises itself (a refusal) is reported the same way."""
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            self._stopped(ctx.meta.get(_GIVEN, []), exc.format_message())
            raise


def probe_option(args: Sequence[str], option: str, envvar: str, default: str) -> str | None:
    """The value ``args`` (or ``envvar``) give ``option``, read leniently from a command line that failed.

    ``None`` when even this one option cannot be read; every other option is ignored.
    """
    probe = click.Command(
        "probe",
        params=[
            click.Option([option], envvar=envvar, default=default),
            click.Argument(["rest"], nargs=-1),
        ],
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        add_help_option=False,
    )
    try:
        with probe.make_context("probe", list(args), resilient_parsing=False) as ctx:
            value = ctx.params[option.lstrip("-").replace("-", "_")]
    except click.ClickException:
        return None
    return str(value) if value is not None else None
