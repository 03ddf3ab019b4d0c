"""Project configuration: ``[tool.trialbook]`` in pyproject.toml, or trialbook.toml, sets option defaults.

A team writes its defaults once (where the evals are, the history branch, concurrency) instead of in every
command line and workflow. The file only supplies defaults through click's ``default_map``, so the
precedence is click's own and holds for every option alike: a flag on the command line, then its
``TRIALBOOK_<OPTION>`` environment variable, then the file, then trialbook's default.

Keys are option names without the dashes (``results-dir`` or ``results_dir``) and apply to every command
that has that option; a table named after a command (``[tool.trialbook.eval]``) applies to that command
only and wins over the shared keys. An unknown key or a value of the wrong type is an error naming the file
and the key, never silently ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ..errors import ConfigError

__all__ = ["CONFIG_FILES", "config_default_map", "find_config"]

CONFIG_FILES = ("trialbook.toml", "pyproject.toml")


def find_config(folder: Path) -> tuple[Path, dict[str, Any]] | None:
    """The configuration in ``folder``: trialbook.toml, else pyproject.toml's ``[tool.trialbook]``.

    trialbook.toml holds the option defaults at its top level (or under ``[tool.trialbook]``).
    """
    found = _find(folder)
    return None if found is None else (found[0], found[1])


def _find(folder: Path) -> tuple[Path, dict[str, Any], str] | None:
    """:func:`find_config` with the name of the table the defaults were read from, for errors.

    ``tool.trialbook``, or ``""`` for the top level of trialbook.toml.
    """
    for name in CONFIG_FILES:
        path = folder / name
        if not path.is_file():
            continue
        import tomllib  # only when there is a file to read

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        if name == "trialbook.toml":
            table: Any = data.get("tool", {}).get("trialbook", data) if "tool" in data else data
        else:
            table = data.get("tool", {}).get("trialbook")
            if table is None:
                continue
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.trialbook] must be a table of option defaults")
        return path, table, "" if table is data else "tool.trialbook"
    return None


def _params(command: click.Command) -> dict[str, click.Parameter]:
    found: dict[str, click.Parameter] = {}
    for param in command.params:
        if param.name is None or param.name in ("help", "version", "as_json"):
            continue
        found[param.name] = param
    return found


def _value(path: Path, where: str, command: click.Command, param: click.Parameter, value: object) -> Any:
    """Check ``value`` with the option's own type; lists for repeatable options (a string becomes one)."""
    repeated = getattr(param, "multiple", False) or param.nargs == -1
    if repeated and isinstance(value, str):
        value = [value]
    if repeated and not isinstance(value, list):
        raise ConfigError(f"{path}: {where}: expected a list (or one string), got {value!r}")
    if not repeated and isinstance(value, list | dict):
        raise ConfigError(f"{path}: {where}: expected one value, got {value!r}")
    if isinstance(value, bool) and not isinstance(param.type, click.types.BoolParamType):
        # TOML's true/false would pass as 1/0 or "True": only on/off options take them.
        raise ConfigError(f"{path}: {where}: expected {param.type.name}, got {str(value).lower()}")
    try:
        param.type_cast_value(click.Context(command), value)
    except click.BadParameter as exc:
        raise ConfigError(f"{path}: {where}: {exc.message}") from None
    return value


def _apply(
    path: Path,
    table: Mapping[str, Any],
    commands: Mapping[str, click.Command],
    only: str | None,
    out: dict[str, dict[str, Any]],
    root: str = "tool.trialbook",
) -> None:
    name = ".".join(part for part in (root, only) if part)
    prefix = f"[{name}]" if name else ""
    # Commands load on first use: a table of one command's options, or no shared key, loads no other.
    targets: Mapping[str, click.Command] = {only: commands[only]} if only else commands
    for key, value in table.items():
        if only is None and key in commands:
            continue  # a per-command table, applied after the shared keys
        name = key.replace("-", "_")
        matched = False
        for command_name, command in targets.items():
            param = _params(command).get(name)
            if param is None:
                continue
            matched = True
            checked = _value(path, f"{prefix} {key}".lstrip(), command, param, value)
            out.setdefault(command_name, {})[name] = checked
        if not matched:
            from ..runner import closest  # the runner, loaded only to word this error

            known = sorted({n.replace("_", "-") for c in targets.values() for n in _params(c)})
            raise ConfigError(
                f"{path}: {f'{prefix} {key}'.lstrip()}: no such option"
                + (f" of trialbook {only}" if only else "")
                + f"; closest: {', '.join(closest(key, known))}"
            )


def config_default_map(group: click.Group, folder: Path) -> dict[str, dict[str, Any]] | None:
    """Click's ``default_map`` for every command from the configuration in ``folder`` (or ``None``)."""
    found = _find(folder)
    if found is None:
        return None
    path, table, root = found
    out: dict[str, dict[str, Any]] = {}
    _apply(path, table, group.commands, None, out, root)
    for name, command_table in table.items():
        if name in group.commands:
            if not isinstance(command_table, dict):
                where = f"[{root}] {name}" if root else name
                raise ConfigError(f"{path}: {where}: expected a table of {name}'s options")
            _apply(path, command_table, group.commands, name, out, root)
    return out
