"""Reading ``agents:`` (names, mappings with options, script agents) and ``shims:``."""

from __future__ import annotations

import dataclasses
import re

from ..agents import AgentSpec
from ..evidence import JsonValue
from ..sandbox import shim_name_problem
from ._context import Context
from ._model import ShimSpec
from ._nodes import Node
from ._placeholders import secret_names
from ._problems import suggest
from ._values import describe, join

__all__ = ["read_agents", "read_shims"]

_AGENTS_EXAMPLE = "agents: [literal, {name: copilot, model: gpt-5.2}]"


def _json(node: Node, field: str, ctx: Context) -> tuple[JsonValue, bool]:
    """The plain JSON value of a node, and whether it was JSON at all."""
    value = node.value
    if isinstance(value, dict):
        pairs = [(key, _json(item, join(field, key), ctx)) for key, item in value.items()]
        return {key: plain for key, (plain, _) in pairs}, all(ok for _, (_, ok) in pairs)
    if isinstance(value, list):
        items = [_json(item, join(field, i), ctx) for i, item in enumerate(value)]
        return [plain for plain, _ in items], all(ok for _, ok in items)
    if value is None or isinstance(value, bool | int | float | str):
        return value, True
    ctx.problems.add(
        node.line, field, f"{describe(value)} is not a plain value", "quote it to make it a string"
    )
    return None, False


def _options(entries: dict[str, Node], field: str, ctx: Context) -> dict[str, JsonValue] | None:
    options: dict[str, JsonValue] = {}
    ok = True
    for key, node in entries.items():
        if key == "name":
            continue
        key_field = join(field, key)
        if key in ("model", "script", "python"):
            text = ctx.read.string(node, key_field, f"{key}: ...")
            ok = ok and text is not None
            options[key] = text
        elif key == "audit_requests":
            if not isinstance(node.value, bool):
                ctx.read.wrong(node, key_field, "true or false", "audit_requests: true")
                ok = False
            options[key] = node.value if isinstance(node.value, bool) else None
        elif key == "env":
            env = ctx.read.mapping(node, key_field, "env: {NEON_API_KEY: '{{ secrets.NEON_API_KEY }}'}")
            values = (
                {}
                if env is None
                else {k: ctx.read.scalar_text(v, join(key_field, k), "PORT: '3000'") for k, v in env.items()}
            )
            ok = ok and env is not None and None not in values.values()
            options[key] = {k: v for k, v in values.items() if v is not None}
        else:
            options[key], valid = _json(node, key_field, ctx)
            ok = ok and valid
    ctx.check_secret_use(list(secret_names(options)), entries["name"].line if "name" in entries else 1, field)
    return options if ok else None


AGENT_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"
"""Agent names name result folders and history lines and are printed in logs, summaries and comments:
words only, so none can carry a control character, a workflow command or an @mention."""


def _name_ok(name: str, item: Node, field: str, ctx: Context) -> bool:
    if re.fullmatch(AGENT_NAME, name):
        return True
    fix = "use 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit, e.g. my-script"
    ctx.problems.add(item.line, field, f"{name!r} is not a valid agent name", fix)
    return False


def _agent(item: Node, field: str, ctx: Context) -> AgentSpec | None:
    value = item.value
    if isinstance(value, AgentSpec):
        if not _name_ok(value.name, item, field, ctx):
            return None
        if value.source == AgentSpec.source:  # still the default: say where the eval file wrote it
            return dataclasses.replace(value, source=ctx.where(item.line))
        return value
    if isinstance(value, str):
        name, options = value, {}
    elif (entries := item.mapping) is not None:
        if "name" not in entries:
            ctx.problems.add(
                item.line, join(field, "name"), "is missing", "write e.g. {name: copilot, model: gpt-5.2}"
            )
            return None
        name_or_none = ctx.read.string(entries["name"], join(field, "name"), "name: copilot")
        found = _options(entries, field, ctx)
        if name_or_none is None or found is None:
            return None
        name, options = name_or_none, found
    else:
        ctx.read.wrong(item, field, "an agent name or a mapping", _AGENTS_EXAMPLE)
        return None
    if not _name_ok(name, item, field, ctx):
        return None
    if "script" not in options and "python" not in options and name not in ctx.known_agents:
        ctx.problems.add(item.line, field, f"unknown agent {name!r}", _known(name, ctx))
        return None
    return AgentSpec(name, options, source=ctx.where(item.line))


def _known(name: str, ctx: Context) -> str:
    known = ", ".join(sorted(ctx.known_agents)) or "none installed"
    close = suggest(name, ctx.known_agents)
    hint = f"did you mean {close}? " if close else ""
    return f"{hint}known agents: {known}; or give a script: to define a script agent"


def read_agents(node: Node, ctx: Context) -> tuple[AgentSpec, ...] | None:
    """The agents of ``agents:``, or ``None`` when any is wrong (each problem recorded)."""
    items = ctx.read.filled_sequence(node, "agents", _AGENTS_EXAMPLE, "name at least one agent")
    if items is None:
        return None
    agents = []
    for index, item in enumerate(items):
        ctx.lines[join("agents", index)] = item.line
        agents.append(_agent(item, join("agents", index), ctx))
    valid = [agent for agent in agents if agent is not None]
    return tuple(valid) if len(valid) == len(agents) else None


def read_shims(node: Node, ctx: Context) -> tuple[ShimSpec, ...] | None:
    """The shims of ``shims:``, in the order written, or ``None`` when any is wrong."""
    entries = ctx.read.mapping(node, "shims", "shims: {npm: passthrough}")
    if entries is None:
        return None
    shims: list[ShimSpec | None] = []
    fix = "write e.g. npm: passthrough, neon: stub, or neon: {script: 'echo neon ok'}"
    for name, value in entries.items():
        field = join("shims", name)
        if (problem := shim_name_problem(name)) is not None:
            ctx.problems.add(value.key_line, field, problem, "name the command, e.g. npm")
            shims.append(None)
        elif value.value in ("passthrough", "stub"):
            shims.append(ShimSpec(name, "passthrough" if value.value == "passthrough" else "stub"))
        elif (body := value.mapping) is not None:
            ctx.read.only_keys(body, field, ("script",))
            example = "neon: {script: 'echo neon ok'}"
            script = (
                ctx.read.string(body["script"], join(field, "script"), example) if "script" in body else None
            )
            if "script" not in body:
                ctx.problems.add(value.line, join(field, "script"), "is missing", fix)
            shims.append(None if script is None or len(body) != 1 else ShimSpec(name, "stub", script))
        else:
            ctx.problems.add(
                value.line,
                field,
                f"expected passthrough, stub or {{script: ...}}, got {describe(value.value)}",
                fix,
            )
            shims.append(None)
    valid = [shim for shim in shims if shim is not None]
    return tuple(valid) if len(valid) == len(shims) else None
