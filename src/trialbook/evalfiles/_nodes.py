"""Values with the line they were written on, from YAML (composed nodes) or from Python keyword arguments.

One tree type for both kinds of eval file lets a single reader check them and point at lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import yaml
from yaml.constructor import ConstructorError, SafeConstructor

from ._bounds import YamlTooLarge, check_yaml_bounds
from ._problems import Problems

__all__ = ["Node", "from_python", "from_yaml"]


@dataclass(frozen=True)
class Node:
    """A value and where it was written.

    ``value`` is ``dict[str, Node]`` for a mapping, ``list[Node]`` for a sequence, and otherwise the
    scalar (or, in Python eval files, any object). ``key_line`` is the line of the key a mapping value
    belongs to: unknown-key problems point there even when the value starts on a later line.
    """

    value: object
    line: int
    key_line: int

    @property
    def mapping(self) -> dict[str, Node] | None:
        """The entries when this node is a mapping."""
        return self.value if isinstance(self.value, dict) else None

    @property
    def items(self) -> list[Node] | None:
        """The items when this node is a sequence."""
        return self.value if isinstance(self.value, list) else None


# libyaml's loader is an order of magnitude faster on large eval folders; marks (lines) are the same.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose(text: str) -> yaml.Node | None:
    # Bounds first: composing a file that nests too deep or expands too far is what must not happen.
    try:
        check_yaml_bounds(text, _LOADER)
        return yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        if _LOADER is yaml.SafeLoader:
            raise
    # The pure-Python parser words syntax errors better ("expected ',' or ']', but got ':'"); a broken
    # file is rare, so it is worth parsing twice.
    check_yaml_bounds(text, yaml.SafeLoader)
    return yaml.compose(text, Loader=yaml.SafeLoader)


def from_yaml(text: str, problems: Problems) -> Node | None:
    """Compose ``text`` into a node tree; syntax errors, duplicate keys and odd keys become problems."""
    try:
        root = _compose(text)
    except YamlTooLarge as exc:
        problems.add(exc.line, exc.field, exc.problem, exc.fix)
        return None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        problems.add(line, "<file>", f"not valid YAML: {what}", "fix the YAML syntax at this line")
        return None
    except yaml.YAMLError as exc:
        problems.add(1, "<file>", f"not valid YAML: {exc}", "fix the YAML syntax")
        return None
    if root is None:
        problems.add(1, "<file>", "the file is empty", "write at least prompt: and agents:")
        return None
    return _convert(root, root.start_mark.line + 1, SafeConstructor(), problems, set(), "")


def _join(field: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{field}[{key}]"
    return f"{field}.{key}" if field else key


def _no_nul(value: object, line: int, field: str, problems: Problems) -> object:
    """Report a NUL character, which no path, argument or environment variable can carry.

    The value goes on without it, so later readers do not report the same string a second time; with a
    problem recorded the eval is refused anyway.
    """
    if isinstance(value, str) and "\0" in value:
        fix = "remove the \\0 (NUL) from the string"
        problems.add(
            line, field or "<file>", "holds a NUL character, which no path or command can carry", fix
        )
        return value.replace("\0", "")
    return value


def _convert(
    node: yaml.Node, key_line: int, build: SafeConstructor, problems: Problems, seen: set[int], field: str
) -> Node:
    line = node.start_mark.line + 1
    if id(node) in seen:  # an alias that contains itself
        problems.add(line, "<file>", "a YAML alias refers to itself", "remove the recursive anchor")
        return Node(None, line, key_line)
    if isinstance(node, yaml.MappingNode):
        seen = seen | {id(node)}
        entries: dict[str, Node] = {}
        for key_node, value_node in node.value:
            key_at = key_node.start_mark.line + 1
            key = _scalar(key_node, build)
            key = _no_nul(key, key_at, _join(field, str(key)), problems)
            if not isinstance(key, str):
                problems.add(key_at, "<file>", f"the key {key!r} is not a string", "quote the key")
                continue
            if key in entries:
                problems.add(key_at, key, "this key is given twice", "keep one of them")
                continue
            entries[key] = _convert(value_node, key_at, build, problems, seen, _join(field, key))
        return Node(entries, line, key_line)
    if isinstance(node, yaml.SequenceNode):
        seen = seen | {id(node)}
        return Node(
            [
                _convert(item, item.start_mark.line + 1, build, problems, seen, _join(field, index))
                for index, item in enumerate(node.value)
            ],
            line,
            key_line,
        )
    return Node(_no_nul(_scalar(node, build), line, field, problems), line, key_line)


def _scalar(node: yaml.Node, build: SafeConstructor) -> object:
    if not isinstance(node, yaml.ScalarNode):
        return node  # a mapping or list used as a key; the caller reports it as not a string
    try:
        return build.construct_object(node, deep=True)
    except ConstructorError:
        return str(node.value)


def from_python(value: object, line: int) -> Node:
    """Wrap a Python value (a ``define_eval`` argument) so every part of it points at the call's line."""
    if isinstance(value, Mapping):
        return Node({str(k): from_python(v, line) for k, v in value.items()}, line, line)
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return Node([from_python(item, line) for item in value], line, line)
    return Node(value, line, line)
