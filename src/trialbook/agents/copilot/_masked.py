"""Known credentials masked out of a whole result tree before anything is saved or returned.

The provider's API key (and the GitHub token the CLI was given) can come back in any text the session
produced: a model that repeats it, a tool that prints it, a raw event that echoes the request. Masking the
finished record, every string at every depth, means the evidence file, ``result.json`` and a test's own
assertions all see ``***``; images (bytes) are left whole, since replacing bytes would corrupt them.

A session knows more credentials than the provider key: a provider ``headers`` entry such as
``Authorization`` or ``api-key``, an MCP server's ``env`` and ``headers``, an ``extra_config`` override, the
CLI environment a test hands over. :func:`known_credentials` collects them all, so a record built without
the runner (the pytest plugin, a script) is masked as fully as a run's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

from ... import masking
from ...masking import Masker
from ._config import CopilotEval

__all__ = ["credential_items", "known_credentials", "mask_record"]

T = TypeVar("T")


def _settings(config: CopilotEval) -> dict[str, Any]:
    return {
        "provider": config.provider or {},
        "mcp_servers": config.mcp_servers,
        "custom_agents": {
            str(agent.get("name", index)): {"mcp_servers": agent.get("mcp_servers", {})}
            for index, agent in enumerate(config.agent_definitions)
        },
        "extra_config": config.extra_config,
    }


def credential_items(config: CopilotEval, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """``(where, value)`` for every credential the session is given: in its settings and the CLI's env.

    ``where`` is the setting's path (``provider.api_key``, ``mcp_servers.gh.env.GITHUB_TOKEN``,
    ``env.OPENAI_API_KEY``). Names are judged by the one rule of :mod:`trialbook.masking`, the rule the
    runner's masker uses: ``api_key``, ``bearer_token``, ``Authorization``, ``X-Api-Key``, ``apiKey`` and
    ``GITHUB_PERSONAL_ACCESS_TOKEN`` count; ``max_tokens``, ``SSH_AUTH_SOCK`` and ``GIT_AUTHOR_NAME`` do not.
    """
    found = [*masking.credential_items(_settings(config)), *masking.credential_items(dict(env), "env")]
    return [(where, value) for where, value in found if value]


def known_credentials(config: CopilotEval, env: Mapping[str, str]) -> tuple[str, ...]:
    """Every credential value the session is given (see :func:`credential_items`), each once."""
    return tuple(dict.fromkeys(value for _, value in credential_items(config, env)))


def _mask(value: Any, masker: Masker) -> Any:
    if isinstance(value, str):
        return masker.text(value)
    if isinstance(value, tuple):
        return tuple(_mask(item, masker) for item in value)
    if isinstance(value, list):
        return [_mask(item, masker) for item in value]
    if isinstance(value, dict):
        return {_mask(key, masker): _mask(item, masker) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _mask(getattr(value, f.name), masker) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value


def mask_record(record: T, masker: Masker) -> T:
    """A copy of ``record`` (a dataclass tree) with every string masked; ``record`` when nothing is known."""
    masked: T = record if not masker.active else _mask(record, masker)
    return masked
