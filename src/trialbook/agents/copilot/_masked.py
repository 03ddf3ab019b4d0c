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
import re
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

from ...masking import Masker
from ._config import CopilotEval

__all__ = ["known_credentials", "mask_record"]

T = TypeVar("T")

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_CREDENTIAL_WORDS = frozenset(
    {"apikey", "authorization", "credential", "credentials", "key", "passwd", "password", "secret", "token"}
)
"""Words that make a name a credential's: ``X-Api-Key``, ``GH_TOKEN``, but not ``GIT_AUTHOR_NAME``."""
_NOT_SECRETS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})
"""Switch values under a credential-like name (``DISABLE_TOKEN_CACHE=true``): masking them would hide text."""
_SCHEME = re.compile(r"^(?:Bearer|Basic|Token|Bot)\s+(\S+)$", re.IGNORECASE)


def _is_credential(name: str) -> bool:
    return any(word.lower() in _CREDENTIAL_WORDS for word in _WORD.findall(name))


def _values(value: Any, name: str = "") -> Iterator[str]:
    """Strings held under a credential-like name, at any depth; ``Bearer X`` yields ``X`` too."""
    if isinstance(value, str):
        if _is_credential(name) and value.strip().lower() not in _NOT_SECRETS:
            yield value
            scheme = _SCHEME.match(value.strip())
            if scheme is not None:
                yield scheme[1]
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _values(item, str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _values(item, name)


def known_credentials(config: CopilotEval, env: Mapping[str, str]) -> tuple[str, ...]:
    """Every credential value the session is given: in its settings and in the CLI's environment.

    A name counts when one of its words is ``key``, ``token``, ``secret``, ``password``, ``credential`` or
    ``authorization``: ``api_key``, ``bearer_token``, ``Authorization``, ``X-Api-Key``, ``apiKey`` and
    ``GITHUB_PERSONAL_ACCESS_TOKEN`` do; ``max_tokens``, ``SSH_AUTH_SOCK`` and ``GIT_AUTHOR_NAME`` do not.
    """
    settings = {
        "provider": config.provider or {},
        "mcp_servers": config.mcp_servers,
        "custom_agents": [agent.get("mcp_servers", {}) for agent in config.agent_definitions],
        "extra_config": config.extra_config,
    }
    found = [*_values(settings), *_values(dict(env))]
    return tuple(dict.fromkeys(value for value in found if value))


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
