"""Reading the ``assert:`` list: one check per item, written as ``- kind: argument``.

Each reader imports its kind's module when it runs: a run reads only the kinds its evals use, and
defining the other kinds' classes would cost every start of ``trialbook eval``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import cast

from ..assertions import Assertion, Pattern
from ._context import Context
from ._fields import ASSERTION_KINDS
from ._nodes import Node
from ._values import join

__all__ = ["ASSERTION_READERS", "read_assertions"]

_EXAMPLES = {doc.name: doc.example for doc in ASSERTION_KINDS}
_PATTERN_FIX = (
    "write a plain command such as 'neon deploy', or a valid /regex/ with special characters escaped"
)


def _pattern(node: Node, field: str, ctx: Context) -> Pattern | None:
    if isinstance(node.value, re.Pattern | Pattern):
        return Pattern.of(node.value)
    if not isinstance(node.value, str):
        ctx.read.wrong(node, field, "a pattern string", 'ran: "neon deploy"')
        return None
    try:
        return Pattern.parse(node.value)
    except ValueError as exc:
        ctx.invalid(node.line, field, str(exc), _PATTERN_FIX)
        return None


def _ran(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import ran

    pattern = _pattern(node, field, ctx)
    return None if pattern is None else ran(pattern)


def _not_ran(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import not_ran

    pattern = _pattern(node, field, ctx)
    return None if pattern is None else not_ran(pattern)


def _ran_in_order(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import ran_in_order

    items = ctx.read.filled_sequence(node, field, _EXAMPLES["ran_in_order"], "list calls in order")
    if items is None:
        return None
    patterns = [_pattern(item, join(field, i), ctx) for i, item in enumerate(items)]
    valid = [pattern for pattern in patterns if pattern is not None]
    return ran_in_order(valid) if len(valid) == len(patterns) else None


def _path(
    node: Node, field: str, ctx: Context, example: str, build: Callable[[str], Assertion]
) -> Assertion | None:
    path = ctx.read.string(node, field, example)
    if path is None:
        return None
    try:
        return build(path)
    except ValueError as exc:
        ctx.invalid(node.line, field, str(exc), "give a path inside the sandbox")
        return None


def _file_exists(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import file_exists

    return _path(node, field, ctx, _EXAMPLES["file_exists"], file_exists)


def _loaded(node: Node, field: str, ctx: Context) -> Assertion | None:
    # Whether the name is declared is checked once the eval's instructions and skills are read.
    from ..assertions import loaded

    name = ctx.read.string(node, field, _EXAMPLES["loaded"])
    return None if name is None else loaded(name)


def _skill_used(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import skill_used

    name = ctx.read.string(node, field, _EXAMPLES["skill_used"])
    return None if name is None else skill_used(name)


def _no_outside_writes(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import no_outside_writes

    example = "no_outside_writes: true, or no_outside_writes: {allow: ['~/.cache/*']}"
    if node.value is True:
        return no_outside_writes()
    if not isinstance(node.value, dict):
        ctx.read.wrong(node, field, "true or a mapping with allow", example)
        return None
    entries = _all_of(node, field, ctx, example, ("allow",))
    if entries is None:
        return None
    items = ctx.read.sequence(entries["allow"], join(field, "allow"), example)
    if items is None:
        return None
    globs: list[str] = []
    for index, item in enumerate(items):
        where = join(join(field, "allow"), index)
        glob = ctx.read.string(item, where, example)  # an empty one is refused there
        if glob is not None:
            globs.append(glob)
    return no_outside_writes(globs) if len(globs) == len(items) else None


def _required(entries: dict[str, Node], node: Node, field: str, keys: tuple[str, ...], ctx: Context) -> bool:
    missing = [key for key in keys if key not in entries]
    for key in missing:
        ctx.problems.add(
            node.line, join(field, key), "is missing", f"write e.g. {_EXAMPLES[field.rpartition('.')[2]]}"
        )
    return not missing


def _all_of(
    node: Node, field: str, ctx: Context, example: str, keys: tuple[str, ...]
) -> dict[str, Node] | None:
    """The mapping when it holds every one of ``keys``; unknown and missing keys are each recorded."""
    entries = ctx.read.mapping(node, field, example)
    if entries is None:
        return None
    ctx.read.only_keys(entries, field, keys)
    return entries if _required(entries, node, field, keys, ctx) else None


def _file_contains(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import file_contains

    example = _EXAMPLES["file_contains"]
    entries = _all_of(node, field, ctx, example, ("path", "pattern"))
    if entries is None:
        return None
    pattern = _pattern(entries["pattern"], join(field, "pattern"), ctx)
    if pattern is None:
        return None
    return _path(
        entries["path"], join(field, "path"), ctx, example, lambda path: file_contains(path, pattern)
    )


def _succeeds(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import succeeds

    example = _EXAMPLES["succeeds"]
    if isinstance(node.value, str):
        entries = {"command": node}
    else:
        found = ctx.read.mapping(node, field, example)
        if found is None:
            return None
        entries = found
        ctx.read.only_keys(entries, field, ("command", "exit_code", "timeout"))
    if not _required(entries, node, field, ("command",), ctx):
        return None
    command = ctx.read.string(entries["command"], join(field, "command"), example)
    exit_code: int | None = 0
    if "exit_code" in entries:
        exit_code = ctx.read.integer(
            entries["exit_code"], join(field, "exit_code"), "exit_code: 0", minimum=0
        )
    timeout_s: float | None = 120.0
    if "timeout" in entries:
        timeout_s = ctx.read.duration(entries["timeout"], join(field, "timeout"), "timeout: 5m")
    if command is None or exit_code is None or timeout_s is None:
        return None
    return succeeds(command, exit_code, timeout_s)


def _assert_that(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ..assertions import CheckFunction, assert_that
    from ._imports import resolve_check, search_dirs

    example = _EXAMPLES["assert_that"]
    entries = _all_of(node, field, ctx, example, ("name", "check"))
    if entries is None:
        return None
    name = ctx.read.string(entries["name"], join(field, "name"), example)
    check_node = entries["check"]
    check: CheckFunction | None = None
    if callable(check_node.value):  # Python eval files may pass the function itself
        check = check_node.value
    elif (reference := ctx.read.string(check_node, join(field, "check"), example)) is not None:
        try:
            found = resolve_check(reference, search_dirs(ctx.source, ctx.evals_root))
            check = cast(CheckFunction, found)  # its return value is checked when it runs
        except ValueError as exc:
            fix = "name a function in a module beside the eval file or in a parent folder"
            ctx.invalid(check_node.line, join(field, "check"), str(exc), fix)
    if name is None or check is None:
        return None
    return assert_that(name, check)


def _judge(node: Node, field: str, ctx: Context) -> Assertion | None:
    from ._read_judge import read_judge

    return read_judge(node, field, ctx)


ASSERTION_READERS: dict[str, Callable[[Node, str, Context], Assertion | None]] = {
    "ran": _ran,
    "not_ran": _not_ran,
    "ran_in_order": _ran_in_order,
    "file_exists": _file_exists,
    "file_contains": _file_contains,
    "loaded": _loaded,
    "skill_used": _skill_used,
    "no_outside_writes": _no_outside_writes,
    "succeeds": _succeeds,
    "assert_that": _assert_that,
    "judge": _judge,
}


def read_assertions(node: Node, ctx: Context) -> tuple[Assertion, ...] | None:
    """The assertions of ``assert:``, or ``None`` when any of them is wrong (each problem recorded)."""
    items = ctx.read.sequence(node, "assert", "assert: [{ran: neon deploy}]")
    if items is None:
        return None
    found: list[Assertion | None] = []
    for index, item in enumerate(items):
        field = join("assert", index)
        ctx.lines[field] = item.line
        if isinstance(item.value, Assertion):
            found.append(item.value)
            continue
        entries = ctx.read.mapping(item, field, "- ran: neon deploy")
        if entries is None:
            found.append(None)
            continue
        if len(entries) != 1:
            keys = ", ".join(entries) or "none"
            ctx.problems.add(
                item.line,
                field,
                f"an item holds exactly one check, found keys: {keys}",
                "start each check with its own -",
            )
            found.append(None)
            continue
        ((kind, value),) = entries.items()
        reader = ASSERTION_READERS.get(kind)
        if reader is None:
            ctx.problems.unknown_key(value.key_line, field, kind, ASSERTION_READERS)
            found.append(None)
            continue
        found.append(reader(value, join(field, kind), ctx))
    valid = [assertion for assertion in found if assertion is not None]
    return tuple(valid) if len(valid) == len(found) else None
