"""The configuration snapshot: the session settings as prepared, minus anything secret or executable.

Recorded before the session is created, after trial-level overrides (working directory, timeout), persona
instructions and ``extra_config`` overrides, so a reader sees what was supplied rather than a
reconstruction. Credentials, MCP commands, arguments,
environment variables, headers and tool handlers never enter it; the request audit is the separate
evidence of what actually went out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ...evidence import JsonObject, JsonValue
from ._config import CopilotEval

__all__ = ["configuration_snapshot", "safe_url"]

_PROVIDER_KEYS = ("type", "wire_api", "transport", "model_provider", "model_id", "wire_model")
_SERVER_KEYS = ("type", "tools", "timeout")
_AGENT_KEYS = ("name", "display_name", "description", "prompt", "tools", "model", "infer", "skills")


def safe_url(url: str) -> str:
    """``url`` without user info, query or fragment, where tokens tend to hide."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _json(value: Any) -> JsonValue:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return str(value)


def _provider(provider: Mapping[str, JsonValue] | None) -> JsonValue:
    if provider is None:
        return None
    kept: JsonObject = {key: _json(provider[key]) for key in _PROVIDER_KEYS if key in provider}
    if isinstance(provider.get("base_url"), str):
        kept["base_url"] = safe_url(str(provider["base_url"]))
    return kept


def _tool(tool: Any) -> JsonObject:
    return {
        "name": _json(getattr(tool, "name", None)),
        "description": _json(getattr(tool, "description", None)),
        "parameters": _json(getattr(tool, "parameters", None)),
        "metadata": _json(getattr(tool, "metadata", None)),
        "skip_permission": _json(getattr(tool, "skip_permission", None)),
        "overrides_built_in_tool": _json(getattr(tool, "overrides_built_in_tool", None)),
    }


def _agent(agent: Mapping[str, JsonValue]) -> JsonObject:
    kept: JsonObject = {key: _json(agent[key]) for key in _AGENT_KEYS if key in agent}
    servers = agent.get("mcp_servers")
    if isinstance(servers, dict):
        kept["mcp_servers"] = [str(name) for name in sorted(servers)]
    return kept


def configuration_snapshot(
    config: CopilotEval, *, working_directory: str, timeout_s: float | None
) -> JsonObject:
    """The settings a session is created with, safe to save and share."""
    snapshot: JsonObject = {
        "agent": config.name,
        "model": config.model,
        "reasoning_effort": config.reasoning_effort,
        "system_message": None
        if config.system_prompt() is None
        else {"mode": "append", "content": config.system_prompt()},
        "personas": list(config.personas),
        "working_directory": working_directory,
        "max_turns": config.max_turns,
        "timeout_s": timeout_s,
        "tool_call_budget": config.tool_call_budget,
        "available_tools": None if config.available_tools is None else list(config.available_tools),
        "excluded_tools": list(config.excluded_tools),
        "skill_directories": list(config.skill_directories),
        "disabled_skills": list(config.disabled_skills),
        "custom_agents": [_agent(agent) for agent in config.agent_definitions],
        "mcp_servers": {
            name: {key: _json(server[key]) for key in _SERVER_KEYS if key in server}
            for name, server in sorted(config.mcp_servers.items())
        },
        "provider": _provider(config.provider),
        "tools": [_tool(tool) for tool in config.tools],
        "deny_permissions": list(config.deny_permissions),
        "audit_requests": config.audit_requests,
    }
    for key, value in config.extra_config.items():  # recorded as the session gets them: overridden
        snapshot[str(key)] = _json(value)
    try:  # a shared helper may add project-wide redaction rules on top of these
        from ...evidence import safe_configuration
    except ImportError:
        return snapshot
    redacted: JsonObject = safe_configuration(snapshot)
    return redacted
