"""A small evaluator for the GitHub Actions expressions trialbook's workflows use in `if` and `concurrency`.

It covers what those expressions need: literals, property paths with ``.*.`` (object filters), ``!``,
``==``/``!=`` (strings compared case-insensitively, like GitHub), ``&&``/``||`` returning an operand,
``contains()`` and ``always()``. Anything else raises, so a workflow using more than this cannot pass a
test by accident.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>\d+)|(?P<op>==|!=|&&|\|\||[!(),])|(?P<path>[A-Za-z_][\w.*-]*))"
)


def _tokens(text: str) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    position = 0
    while position < len(text.rstrip()):
        match = _TOKEN.match(text, position)
        if match is None:
            raise ValueError(f"cannot read the expression at {text[position:]!r}")
        kind = match.lastgroup
        assert kind is not None
        found.append((kind, match.group(kind)))
        position = match.end()
    return found


def _resolve(path: str, context: Mapping[str, Any]) -> Any:
    if path in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[path]
    values: list[Any] = [context]
    spread = False
    for part in path.split("."):
        if part == "*":
            values = [item for value in values for item in (value if isinstance(value, list) else [])]
            spread = True
            continue
        values = [value.get(part) if isinstance(value, Mapping) else None for value in values]
    return values if spread else values[0]


def _truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and value == value


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.lower() == right.lower()
    return bool(left == right)


class _Parser:
    def __init__(self, text: str, context: Mapping[str, Any]) -> None:
        self.tokens, self.context, self.index = _tokens(text), context, 0

    def peek(self) -> str | None:
        return self.tokens[self.index][1] if self.index < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expression(self) -> Any:
        left = self.conjunction()
        while self.peek() == "||":
            self.take()
            right = self.conjunction()
            left = left if _truthy(left) else right
        return left

    def conjunction(self) -> Any:
        left = self.comparison()
        while self.peek() == "&&":
            self.take()
            right = self.comparison()
            left = right if _truthy(left) else left
        return left

    def comparison(self) -> Any:
        left = self.unary()
        while self.peek() in ("==", "!="):
            op = self.take()[1]
            right = self.unary()
            left = _equal(left, right) if op == "==" else not _equal(left, right)
        return left

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not _truthy(self.unary())
        kind, text = self.take()
        if text == "(":
            value = self.expression()
            assert self.take()[1] == ")"
            return value
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if kind == "num":
            return int(text)
        if kind == "path" and text == "always" and self.peek() == "(":
            self.take()
            assert self.take()[1] == ")"
            return True  # as a job's `if`: run whatever the jobs it needs did
        if kind == "path" and self.peek() == "(":
            if text != "contains":
                raise ValueError(f"function {text}() is not supported here")
            self.take()
            haystack = self.expression()
            assert self.take()[1] == ","
            needle = self.expression()
            assert self.take()[1] == ")"
            if isinstance(haystack, list):
                return any(_equal(item, needle) for item in haystack)
            return str(needle).lower() in str(haystack).lower()
        if kind == "path":
            return _resolve(text, self.context)
        raise ValueError(f"unexpected {text!r}")


def evaluate(text: str, context: Mapping[str, Any]) -> Any:
    """The value of one expression (without ``${{ }}``)."""
    parser = _Parser(text.strip(), context)
    value = parser.expression()
    if parser.peek() is not None:
        raise ValueError(f"unread tokens after {text!r}")
    return value


def interpolate(text: str, context: Mapping[str, Any]) -> str:
    """A string field with ``${{ … }}`` parts replaced by their values, as the runner does."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: str(evaluate(m.group(1), context)), text)
