"""``CopilotEval``: how one Copilot agent is configured, from Python or from an eval file's agent entry.

Eval-file options are checked here, before any trial, so a misspelt option or a wrong type stops the run
with a message naming the file and the option instead of surfacing as a confusing session failure.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from ...errors import ConfigError
from ...evidence import JsonValue
from .._protocol import AgentSpec

__all__ = ["PROVIDER_TYPES", "CopilotEval", "eval_from_spec", "load_agent_file"]

PROVIDER_TYPES = ("openai", "azure", "anthropic")
_AGENT_KEYS = frozenset(
    {"name", "display_name", "description", "tools", "prompt", "mcp_servers", "infer", "skills", "model"}
)
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smh]?)\s*$")


RESERVED_SESSION_OPTIONS = frozenset({"session_id", "on_permission_request", "on_event", "hooks"})
"""``create_session`` options trialbook sets for its evidence, which ``extra_config`` may not replace."""


@dataclass(frozen=True)
class CopilotEval:
    """One Copilot agent: the settings every session it runs is created with.

    ``instructions`` is appended to Copilot's own system message. ``tool_call_budget`` caps admitted tool
    calls per trial (the call past the cap is denied before it runs). ``skill_directories`` are checked
    before the prompt is sent; ``disabled_skills`` may be disabled there on purpose. ``custom_agents`` holds
    SDK agent definitions (``.agent.md`` files are loaded into this shape). ``tools`` are Python tools made
    with ``copilot.define_tool`` (Python only). ``deny_permissions`` lists permission kinds (``shell``,
    ``write``, ``custom-tool``, ``mcp``, ``url``, ``read``) answered with a refusal; every other request is
    approved once. ``cli_path`` overrides ``COPILOT_CLI_PATH``.

    ``personas`` (Python only) are instruction blocks saying who the agent acts as or for (a first-time
    contributor, a reviewer in a hurry); each is appended to the system message after ``instructions``, in
    order. ``extra_config`` (Python only) holds SDK ``create_session`` options applied over the prepared
    ones, for settings trialbook has no field for; the configuration snapshot records the result of the
    override. The callbacks trialbook needs for its evidence cannot be overridden.
    """

    name: str = "copilot"
    instructions: str | None = None
    model: str | None = None
    working_directory: str | None = None
    max_turns: int | None = None
    timeout_s: float | None = None
    tool_call_budget: int | None = None
    available_tools: tuple[str, ...] | None = None
    excluded_tools: tuple[str, ...] = ()
    skill_directories: tuple[str, ...] = ()
    disabled_skills: tuple[str, ...] = ()
    custom_agents: tuple[Mapping[str, JsonValue] | str | os.PathLike[str], ...] = ()
    mcp_servers: Mapping[str, Mapping[str, JsonValue]] = field(default_factory=dict)
    reasoning_effort: str | None = None
    provider: Mapping[str, JsonValue] | None = None
    audit_requests: bool = False
    tools: tuple[Any, ...] = ()
    deny_permissions: tuple[str, ...] = ()
    cli_path: str | None = None
    personas: tuple[str, ...] = ()
    extra_config: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Load ``.agent.md`` paths given in ``custom_agents`` (relative to the current directory)."""
        reserved = sorted(set(self.extra_config) & RESERVED_SESSION_OPTIONS)
        if reserved:
            raise ConfigError(
                f"CopilotEval(extra_config=...): {', '.join(reserved)} cannot be overridden: trialbook's "
                "evidence (events, permissions, the tool budget) depends on them"
            )
        agents: list[Mapping[str, JsonValue]] = []
        for item in self.custom_agents:
            if isinstance(item, str | os.PathLike):
                path = Path(item)
                if not path.name.endswith(".agent.md") or not path.is_file():
                    raise ConfigError(
                        f"CopilotEval(custom_agents=...): {str(item)!r} is not an existing .agent.md file "
                        f"(relative to {Path.cwd()}); give a path to one, or an agent mapping"
                    )
                agents.append(load_agent_file(path))
            else:
                agents.append(item)
        object.__setattr__(self, "custom_agents", tuple(agents))

    def system_prompt(self) -> str | None:
        """The system-message text trialbook supplies: ``instructions`` then each persona, or ``None``.

        An ``extra_config`` ``system_message`` with string ``content`` replaces it, as it replaces the
        session's. This is what was supplied, not Copilot's own hidden instructions.
        """
        override = self.extra_config.get("system_message")
        if isinstance(override, Mapping) and isinstance(override.get("content"), str):
            return str(override["content"])
        parts = [part for part in (self.instructions, *self.personas) if part]
        return "\n\n".join(parts) if parts else None

    @property
    def agent_definitions(self) -> tuple[Mapping[str, JsonValue], ...]:
        """``custom_agents`` as SDK agent definitions, every ``.agent.md`` path already loaded."""
        return tuple(agent for agent in self.custom_agents if isinstance(agent, Mapping))


def load_agent_file(path: Path) -> dict[str, JsonValue]:
    """Read a ``.agent.md`` file: YAML front matter for the settings, the Markdown body as the prompt.

    The name defaults to the file name without ``.agent.md`` so a bare file is still a usable agent.
    """
    text = path.read_text(encoding="utf-8")
    meta: dict[str, JsonValue] = {}
    body = text
    if text.startswith("---"):
        parts = text.split("\n---", 1)
        if len(parts) == 2:
            loaded = yaml.safe_load(parts[0][3:]) or {}
            if not isinstance(loaded, dict):
                raise ConfigError(f"{path}: front matter must be a mapping")
            meta = {str(k): v for k, v in loaded.items()}
            body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    unknown = sorted(set(meta) - _AGENT_KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown front matter key(s) {', '.join(unknown)}")
    agent: dict[str, JsonValue] = dict(meta)
    agent.setdefault("name", path.name.removesuffix(".agent.md"))
    agent["prompt"] = body.strip()
    return agent


class _Checker:
    """Collects every problem in one agent entry so the user fixes them all in one go."""

    def __init__(self, spec: AgentSpec) -> None:
        self.spec = spec
        self.problems: list[str] = []
        source = Path(spec.source)
        self.base = source.parent if source.suffix in {".yaml", ".yml", ".py"} else Path.cwd()

    def fail(self, key: str, message: str) -> None:
        self.problems.append(f"{self.spec.source}: agent {self.spec.name!r} option {key!r}: {message}")

    def string(self, key: str, value: JsonValue) -> str | None:
        if isinstance(value, str):
            return value
        self.fail(key, f"expected a string, got {type(value).__name__}")
        return None

    def count(self, key: str, value: JsonValue, minimum: int) -> int | None:
        if isinstance(value, int) and not isinstance(value, bool) and value >= minimum:
            return value
        self.fail(key, f"expected a whole number >= {minimum}, got {value!r}")
        return None

    def seconds(self, key: str, value: JsonValue) -> float | None:
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
        match = _DURATION.match(value) if isinstance(value, str) else None
        if match and float(match.group(1)) > 0:
            return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]
        self.fail(key, f"expected a positive duration such as 90, '30s' or '10m', got {value!r}")
        return None

    def names(self, key: str, value: JsonValue) -> tuple[str, ...] | None:
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return tuple(str(item) for item in value)
        self.fail(key, "expected a list of strings")
        return None

    def path(self, key: str, value: JsonValue) -> str | None:
        text = self.string(key, value)
        return None if text is None else str((self.base / text).resolve())

    def paths(self, key: str, value: JsonValue) -> tuple[str, ...] | None:
        names = self.names(key, value)
        return None if names is None else tuple(str((self.base / name).resolve()) for name in names)

    def flag(self, key: str, value: JsonValue) -> bool | None:
        if isinstance(value, bool):
            return value
        self.fail(key, f"expected true or false, got {value!r}")
        return None

    def provider(self, key: str, value: JsonValue) -> Mapping[str, JsonValue] | None:
        if not isinstance(value, dict):
            self.fail(key, "expected a mapping such as {type: openai, base_url: ..., api_key: ...}")
            return None
        if value.get("type") not in PROVIDER_TYPES:
            self.fail(key, f"type must be one of {', '.join(PROVIDER_TYPES)}, got {value.get('type')!r}")
        if not isinstance(value.get("base_url"), str):
            self.fail(key, "base_url (a string) is required")
        return value

    def agents(self, key: str, value: JsonValue) -> tuple[Mapping[str, JsonValue], ...] | None:
        if not isinstance(value, list):
            self.fail(key, "expected a list of agent mappings or paths to .agent.md files")
            return None
        agents: list[Mapping[str, JsonValue]] = []
        for item in value:
            if isinstance(item, str):
                path = self.base / item
                if not item.endswith(".agent.md") or not path.is_file():
                    self.fail(key, f"{item!r} is not an existing .agent.md file (relative to {self.base})")
                    continue
                try:
                    agents.append(load_agent_file(path))
                except ConfigError as exc:
                    self.problems.extend(exc.problems)
            elif isinstance(item, dict):
                unknown = sorted(set(item) - _AGENT_KEYS)
                if (
                    unknown
                    or not isinstance(item.get("name"), str)
                    or not isinstance(item.get("prompt"), str)
                ):
                    self.fail(
                        key, f"each agent needs string name and prompt; unknown keys: {unknown or 'none'}"
                    )
                    continue
                agents.append(item)
            else:
                self.fail(key, f"unexpected entry {item!r}")
        return tuple(agents)

    def servers(self, key: str, value: JsonValue) -> Mapping[str, Mapping[str, JsonValue]] | None:
        if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
            return {name: server for name, server in value.items() if isinstance(server, dict)}
        self.fail(key, "expected a mapping of server name to server settings")
        return None


_OPTION_CHECKS: dict[str, Callable[[_Checker, str, JsonValue], object]] = {
    "instructions": _Checker.string,
    "model": _Checker.string,
    "working_directory": _Checker.path,
    "max_turns": lambda c, k, v: c.count(k, v, 1),
    "timeout_s": _Checker.seconds,
    "tool_call_budget": lambda c, k, v: c.count(k, v, 0),
    "available_tools": _Checker.names,
    "excluded_tools": _Checker.names,
    "skill_directories": _Checker.paths,
    "disabled_skills": _Checker.names,
    "custom_agents": _Checker.agents,
    "mcp_servers": _Checker.servers,
    "reasoning_effort": _Checker.string,
    "provider": _Checker.provider,
    "audit_requests": _Checker.flag,
    "deny_permissions": _Checker.names,
    "cli_path": _Checker.string,
}
_RUNNER_KEYS = frozenset({"env"})
"""Keys of an agent entry the runner consumes itself (``env`` is merged into every task's env)."""


def eval_from_spec(spec: AgentSpec) -> CopilotEval:
    """Validate an eval file's ``{name: copilot, ...}`` entry and build the configuration it describes.

    Raises:
        ConfigError: naming ``spec.source`` and each unknown or ill-typed option.
    """
    checker = _Checker(spec)
    values: dict[str, Any] = {}
    known = {f.name for f in fields(CopilotEval)}
    for key, value in spec.options.items():
        if key in _RUNNER_KEYS:
            continue
        check = _OPTION_CHECKS.get(key)
        if check is None:
            allowed = ", ".join(sorted(_OPTION_CHECKS))
            checker.fail(key, f"unknown option; the copilot agent accepts: {allowed}, env")
            continue
        checked = check(checker, key, value)
        if checked is not None and key in known:
            values[key] = checked
    if checker.problems:
        raise ConfigError(checker.problems)
    return CopilotEval(name=spec.name, **values)
