r"""``{{ name }}`` and ``{{ secrets.NAME }}`` in prompts: finding them, and filling them in.

Prompts are Markdown that may itself show template syntax, so only the exact placeholder grammar is
special: ``\{{`` writes a literal ``{{``, and ``${{ … }}`` (GitHub Actions expressions, common in CI
setup guides) is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from ..evidence import JsonValue

__all__ = [
    "PARAM_NAME",
    "SECRET_NAME",
    "Placeholder",
    "fill",
    "fill_secrets",
    "find_placeholders",
    "secret_marker",
    "secret_names",
]

PARAM_NAME = re.compile(r"[A-Za-z_][\w-]*")
SECRET_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

_TOKEN = re.compile(
    r"(?P<escape>\\\{\{)|(?<!\$)\{\{\s*(?P<secret>secrets\.)?(?P<name>[A-Za-z_][\w-]*)\s*\}\}"
)
_SECRET_TOKEN = re.compile(r"(?<![\\$])\{\{\s*secrets\.(?P<name>[A-Za-z_][\w-]*)\s*\}\}")


@dataclass(frozen=True)
class Placeholder:
    """One placeholder in a text: its name, whether it names a secret, and its 1-based line."""

    name: str
    secret: bool
    line: int

    @property
    def written(self) -> str:
        """How the placeholder reads in the prompt."""
        return "{{ secrets." + self.name + " }}" if self.secret else "{{ " + self.name + " }}"


def secret_marker(name: str) -> str:
    """What a secret renders as where its value must not appear but its identity matters (cache keys)."""
    return f"<secret:{name}>"


def find_placeholders(text: str) -> Iterator[Placeholder]:
    """Every placeholder of ``text``, in order; escaped ones are not placeholders."""
    for match in _TOKEN.finditer(text):
        if match["escape"] is None:
            line = text.count("\n", 0, match.start()) + 1
            yield Placeholder(match["name"], match["secret"] is not None, line)


def fill(text: str, params: Mapping[str, str], secrets: Mapping[str, str]) -> str:
    """``text`` with placeholders replaced by ``params`` and ``secrets`` values and escapes resolved.

    Raises:
        KeyError: a placeholder has no value; loading checks this, so it means a bug or an unloaded spec.
    """

    def replace(match: re.Match[str]) -> str:
        if match["escape"] is not None:
            return "{{"
        source = secrets if match["secret"] is not None else params
        return source[match["name"]]

    return _TOKEN.sub(replace, text)


def fill_secrets(value: JsonValue, replacement: Callable[[str], str]) -> JsonValue:
    """A copy of a JSON value whose ``{{ secrets.NAME }}`` placeholders (in strings and keys) are replaced.

    Only secrets are filled: agent options are not prompts, and other braces in them are left as written.
    """
    if isinstance(value, str):
        return _SECRET_TOKEN.sub(lambda match: replacement(match["name"]), value)
    if isinstance(value, list):
        return [fill_secrets(item, replacement) for item in value]
    if isinstance(value, dict):
        return {
            str(fill_secrets(key, replacement)): fill_secrets(item, replacement)
            for key, item in value.items()
        }
    return value


def secret_names(value: JsonValue) -> Iterator[str]:
    """The secret names a JSON value's strings refer to, in order (with repeats)."""
    if isinstance(value, str):
        yield from (match["name"] for match in _SECRET_TOKEN.finditer(value))
    elif isinstance(value, list):
        for item in value:
            yield from secret_names(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from secret_names(key)
            yield from secret_names(item)
