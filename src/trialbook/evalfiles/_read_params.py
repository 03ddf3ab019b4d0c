"""Reading ``params:`` and ``secrets:``, and checking that the prompt's placeholders name them.

Both keys are read before any other, so the placeholder check (and the secret references in agent options)
can tell a misspelt name from a missing declaration. A ``None`` result means a problem was recorded.
"""

from __future__ import annotations

from pathlib import Path

from ._context import Context
from ._fields import FIELDS
from ._nodes import Node
from ._placeholders import PARAM_NAME, SECRET_NAME, find_placeholders
from ._problems import display_path, suggest
from ._values import join

__all__ = ["check_placeholders", "read_params", "read_secrets"]

_EXAMPLE = {doc.name: doc.example for doc in FIELDS}


def read_params(node: Node, ctx: Context) -> dict[str, str] | None:
    """The ``params:`` mapping of names to text."""
    entries = ctx.read.mapping(node, "params", _EXAMPLE["params"])
    params: dict[str, str] | None = {} if entries is not None else None
    for name, value in (entries or {}).items():
        text = ctx.read.scalar_text(value, join("params", name), f"{name}: demo")
        if not PARAM_NAME.fullmatch(name) or name == "secrets":
            fix = "use letters, digits, '_' and '-', starting with a letter; secrets go under secrets:"
            ctx.problems.add(value.key_line, join("params", name), f"{name!r} cannot be a param name", fix)
            text = None
        if params is not None and text is not None:
            params[name] = text
        else:
            params = None
    return params


def read_secrets(node: Node, ctx: Context) -> tuple[str, ...] | None:
    """The ``secrets:`` list of environment variable names, each once; their lines go to ``ctx.lines``."""
    items = ctx.read.sequence(node, "secrets", _EXAMPLE["secrets"])
    names: list[str] | None = [] if items is not None else None
    for index, item in enumerate(items or []):
        field = join("secrets", index)
        name = ctx.read.string(item, field, "NEON_API_KEY")
        if name is not None and not SECRET_NAME.fullmatch(name):
            fix = "name the environment variable, e.g. NEON_API_KEY"
            ctx.problems.add(item.line, field, f"{name!r} is not an environment variable name", fix)
            name = None
        elif name is not None and names is not None and name in names:
            ctx.problems.add(item.line, field, f"{name} is listed twice", "list each secret once")
        if name is not None and names is not None:
            names.append(name)
            ctx.lines[join("secrets", name)] = item.line
        else:
            names = None
    return None if names is None else tuple(dict.fromkeys(names))


def check_placeholders(
    prompt: tuple[str, Path | None], params: dict[str, str] | None, entries: dict[str, Node], ctx: Context
) -> None:
    """Report each placeholder in the prompt that names no declared param or secret, once."""
    text, path = prompt
    key = "prompt" if path is not None else "prompt_text"
    line = entries[key].line
    reported: set[tuple[bool, str]] = set()
    for placeholder in find_placeholders(text):
        where = (
            f"{display_path(path)}:{placeholder.line}"
            if path
            else f"line {placeholder.line} of the prompt text"
        )
        if (placeholder.secret, placeholder.name) in reported:
            continue
        reported.add((placeholder.secret, placeholder.name))
        if placeholder.secret:
            if ctx.secrets is not None and placeholder.name not in ctx.secrets:
                problem = f"{placeholder.written} at {where} is not declared"
                ctx.problems.add(line, key, problem, f"add {placeholder.name} to secrets: [...]")
        elif params is not None and placeholder.name not in params:
            close = suggest(placeholder.name, params)
            fix = f"did you mean {close}? Or" if close else "add it under params, or"
            fix += r" write \{{ to keep the braces as text"
            ctx.problems.add(line, key, f"{placeholder.written} at {where} is not a param", fix)
