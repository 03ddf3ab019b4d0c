"""A click group that imports a command's module only when that command runs (or its help is asked for).

``trialbook --help`` and ``trialbook --version`` are typed by people and called by shell completion and
wrappers; importing every command module first (the runner, pygit2, the viewer's templates) made them
cost several times what click itself costs. Each command is registered by name with the module that
defines it and the first paragraph of its help, which the group's own ``--help`` lists; a test checks
those summaries against the commands' real help so the listing cannot drift.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any

import click

from ._common import TrialbookGroup

__all__ = ["LazyCommand", "LazyGroup"]


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives (``module:attribute``, relative to this package) and its one-line summary."""

    target: str
    summary: str


class _Commands(MutableMapping[str, click.Command]):
    """The group's ``commands``: every name is known up front, each command is imported on first access."""

    def __init__(self, lazy: Mapping[str, LazyCommand]) -> None:
        self._lazy = dict(lazy)
        self._loaded: dict[str, click.Command] = {}

    def _load(self, name: str) -> click.Command:
        module, _, attribute = self._lazy[name].target.partition(":")
        command = getattr(importlib.import_module(module, __package__), attribute)
        assert isinstance(command, click.Command), f"{module}:{attribute} is not a click command"
        self._loaded[name] = command
        return command

    def __getitem__(self, name: str) -> click.Command:
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._lazy:
            raise KeyError(name)
        return self._load(name)

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._lazy.pop(name, None)
        del self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._lazy or name in self._loaded

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._lazy, *self._loaded}))

    def __len__(self) -> int:
        return len({*self._lazy, *self._loaded})

    def summary(self, name: str) -> click.Command:
        """A stand-in carrying only the summary, or the real command when it is loaded already."""
        if name in self._loaded or name not in self._lazy:
            return self[name]
        return click.Command(name, help=self._lazy[name].summary)


class LazyGroup(TrialbookGroup):
    """A :class:`TrialbookGroup` whose subcommands are :class:`LazyCommand` entries until first use."""

    def __init__(self, *args: Any, lazy: Mapping[str, LazyCommand], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands: _Commands = _Commands(lazy)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list of ``--help``, exactly as click renders it, without importing any command."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = [(name, self.commands.summary(name).get_short_help_str(limit)) for name in names]
        with formatter.section("Commands"):
            formatter.write_dl(rows)
