"""A model script from a YAML file, for ``trialbook model serve``: the replies a loopback model gives.

The file is the command line's way to write what Python tests write with :func:`~._wire.shell` and
:func:`~._wire.say`::

    replies:                        # by position in the conversation
      - run: echo hi > hi.txt       # the agent runs this in its own shell tool
      - say: Done.                  # a final answer that ends the turn
    when:                           # optional: a request carrying this text anywhere gets these instead
      "Use pnpm":
        - run: pnpm install
        - say: Installed with pnpm.

A reply is one of ``run``, ``say``, ``tool`` (with ``arguments``) or ``hang: true``; ``input_tokens`` and
``output_tokens`` set the usage it reports. Every mistake is reported with the file, the field and a fix.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import ConfigError
from ._wire import Turn

__all__ = ["ModelScript", "load_replies"]

_KINDS = ("run", "say", "tool", "hang")
_EXAMPLE = "replies: [{run: 'echo hi > hi.txt'}, {say: Done.}]"
MAX_FILE_BYTES = 1 << 20
"""A replies file is written by hand; one over 1 MiB is refused rather than read."""


@dataclass(frozen=True)
class ModelScript:
    """The replies by position, and the replies for requests that carry a marker text."""

    replies: tuple[Turn, ...]
    when: dict[str, tuple[Turn, ...]]


def _fail(path: Path, field: str, problem: str, fix: str) -> ConfigError:
    return ConfigError(f"{path}: {field}: {problem}; {fix}")


def _count(path: Path, field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _fail(path, field, f"expected a whole number of tokens, got {value!r}", "write e.g. 120")
    return value


def _reply(path: Path, field: str, item: Any) -> Turn:
    turn = _kind(path, field, item)
    counts = {
        key: _count(path, f"{field}.{key}", item[key])
        for key in ("input_tokens", "output_tokens")
        if key in item
    }
    return dataclasses.replace(
        turn,
        input_tokens=counts.get("input_tokens", turn.input_tokens),
        output_tokens=counts.get("output_tokens", turn.output_tokens),
    )


def _kind(path: Path, field: str, item: Any) -> Turn:
    if not isinstance(item, dict):
        raise _fail(path, field, f"expected a mapping, got {item!r}", f"write e.g. {_EXAMPLE}")
    kinds = [key for key in _KINDS if key in item]
    if len(kinds) != 1:
        found = ", ".join(kinds) or "none of them"
        raise _fail(path, field, f"a reply has exactly one of run, say, tool, hang ({found} given)", _EXAMPLE)
    allowed = {kinds[0], "input_tokens", "output_tokens"} | ({"arguments"} if kinds[0] == "tool" else set())
    for key in item:
        if key not in allowed:
            raise _fail(path, f"{field}.{key}", "unknown key", f"use only {', '.join(sorted(allowed))}")
    kind, value = kinds[0], item[kinds[0]]
    if kind == "hang":
        if value is not True:
            raise _fail(path, f"{field}.hang", f"expected true, got {value!r}", "write hang: true")
        return Turn(hang=True)
    if not isinstance(value, str) or not value:
        raise _fail(path, f"{field}.{kind}", f"expected text, got {value!r}", "quote it, e.g. run: 'ls'")
    if kind == "run":
        return Turn(command=value)
    if kind == "say":
        return Turn(text=value)
    arguments = item.get("arguments", {})
    if not isinstance(arguments, dict) or not all(isinstance(k, str) for k in arguments):
        raise _fail(
            path,
            f"{field}.arguments",
            "expected a mapping of argument names",
            "write arguments: {path: a.txt}",
        )
    return Turn(tool_calls=((value, arguments),))


def _replies(path: Path, field: str, items: Any) -> tuple[Turn, ...]:
    if not isinstance(items, list) or not items:
        raise _fail(path, field, "expected a non-empty list of replies", f"write e.g. {_EXAMPLE}")
    return tuple(_reply(path, f"{field}[{index}]", item) for index, item in enumerate(items))


def load_replies(path: Path) -> ModelScript:
    """Read and check a replies file.

    Raises:
        ConfigError: the file is missing, too large, not YAML, or a field is wrong (named, with a fix).
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the replies file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_FILE_BYTES:,} bytes; a replies file is a short script")
    try:
        document = yaml.safe_load(data.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(document, dict) or "replies" not in document:
        raise _fail(path, "replies", "is missing", f"write e.g. {_EXAMPLE}")
    for key in document:
        if key not in ("replies", "when"):
            raise _fail(path, str(key), "unknown key", "use replies: and, optionally, when:")
    when_node = document.get("when", {})
    if not isinstance(when_node, dict):
        raise _fail(path, "when", "expected a mapping of marker text to replies", "when: {'Use pnpm': [...]}")
    when: dict[str, tuple[Turn, ...]] = {}
    for marker, items in when_node.items():
        if not isinstance(marker, str) or not marker:
            raise _fail(path, "when", f"a marker must be text, got {marker!r}", "quote it")
        when[marker] = _replies(path, f"when.{marker}", items)
    return ModelScript(_replies(path, "replies", document["replies"]), when)
