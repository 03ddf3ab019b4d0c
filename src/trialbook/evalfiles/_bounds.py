"""Limits on what an eval file may expand to, checked on the YAML event stream before anything is built.

A few hundred bytes of nested aliases ("billion laughs") describe billions of values, and thousands of
nested brackets exhaust the recursion of any tree builder. Both are visible in the parser's events, which
libyaml produces without recursion and without expanding aliases, so the check costs one linear pass and
no memory beyond the open nesting levels. Only a file within both limits is composed into nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

__all__ = ["MAX_DEPTH", "MAX_EXPANDED_NODES", "YamlTooLarge", "check_yaml_bounds"]

MAX_EXPANDED_NODES = 100_000
"""Values (scalars, lists, mappings) a file may hold once every alias is expanded; real eval files hold
hundreds, so this leaves room for generated files while keeping memory bounded."""

MAX_DEPTH = 64
"""Lists and mappings nested inside each other; an eval file needs about five levels."""


class YamlTooLarge(Exception):
    """The file exceeds a limit; ``line`` is where the limit was crossed (1-based)."""

    def __init__(self, line: int, field: str, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.line = line
        self.field = field
        self.problem = problem
        self.fix = fix


@dataclass
class _Open:
    """A list or mapping whose end event has not come yet."""

    anchor: str | None
    mapping: bool
    size: int = 1
    items: int = 0  # events directly inside: keys and values alternate in a mapping
    key: str = "?"

    def child(self, event: yaml.Event) -> None:
        if self.mapping and self.items % 2 == 0:
            value = getattr(event, "value", None)
            self.key = value if isinstance(value, str) else "?"
        self.items += 1

    @property
    def part(self) -> str:
        return self.key if self.mapping else f"[{max(self.items - 1, 0)}]"


_SHOWN_PARTS = 4


def _field(stack: list[_Open]) -> str:
    """Where the walk is, as eval-file field names (``params.x[2]``), shortened for deep nesting."""
    parts = [frame.part for frame in stack if frame.items]
    shown = parts[:_SHOWN_PARTS]
    text = "".join(part if part.startswith("[") or not i else f".{part}" for i, part in enumerate(shown))
    return (text + ("..." if len(parts) > _SHOWN_PARTS else "")) or "<file>"


def _line(event: yaml.Event) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 1


def check_yaml_bounds(text: str, loader: type[yaml.SafeLoader]) -> None:
    """Raise :class:`YamlTooLarge` when ``text`` nests deeper than ``MAX_DEPTH`` or expands too far.

    Raises:
        YamlTooLarge: a limit is crossed; the line is the collection or alias that crossed it.
        yaml.YAMLError: the text is not valid YAML (the caller reports it like any syntax error).
    """
    sizes: dict[str, int] = {}  # expanded size of every finished anchored node
    stack: list[_Open] = []
    total = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.NodeEvent) and stack:
            stack[-1].child(event)
        if isinstance(event, yaml.CollectionStartEvent):
            stack.append(_Open(event.anchor, isinstance(event, yaml.MappingStartEvent)))
            total += 1
            if len(stack) > MAX_DEPTH:
                raise YamlTooLarge(
                    _line(event),
                    _field(stack),
                    f"lists and mappings are nested more than {MAX_DEPTH} levels deep",
                    "flatten the structure; eval files need only a few levels",
                )
            continue
        if isinstance(event, yaml.CollectionEndEvent):
            done = stack.pop()
            if done.anchor is not None:
                sizes[done.anchor] = done.size
            if stack:
                stack[-1].size += done.size
            continue
        if isinstance(event, yaml.ScalarEvent):
            size = 1
            if event.anchor is not None:
                sizes[event.anchor] = 1
        elif isinstance(event, yaml.AliasEvent):
            # An alias to an anchor still open (a recursive structure) counts once; the tree builder
            # reports it.
            size = sizes.get(event.anchor or "", 1)
        else:
            continue
        if stack:
            stack[-1].size += size
        total += size
        if total > MAX_EXPANDED_NODES:
            where = "this alias" if isinstance(event, yaml.AliasEvent) else "the file"
            raise YamlTooLarge(
                _line(event),
                _field(stack),
                f"{where} expands the file to more than {MAX_EXPANDED_NODES:,} values "
                "(YAML aliases are expanded wherever they are used)",
                "repeat less through aliases, or split the eval into several files",
            )
