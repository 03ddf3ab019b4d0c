"""Which names hold credentials: the one rule every masker of trialbook is fed by (pure).

A run's options, a Copilot session's provider and MCP settings, an agent's environment: each is a tree of
names and values, and the values under a credential's name are masked wherever they appear. Matching a
name by substring (``AUTH`` anywhere) masks ``GIT_AUTHOR_NAME``'s author and ``SSH_AUTH_SOCK``'s path,
and hides ordinary text in every result; so a name is split into words (``GH_TOKEN``, ``X-Api-Key``,
``apiKey``, ``ANTHROPIC_AUTH_TOKEN``) and it counts when one word is a credential's:

- ``token``, ``secret``, ``password``, ``passwd``, ``passphrase``, ``credential(s)`` or
  ``authorization``, alone or ending a word run together (``PGPASSWORD``, ``GHTOKEN``, ``accesstoken``);
- ``key``, alone or after a qualifier in one word (``apikey``, ``secretkey``, ``privatekey``);
- ``auth`` as the last word, where it names the value itself (``BASIC_AUTH``, npm's ``_auth``); as a
  qualifier (``auth_mode``, ``SSH_AUTH_SOCK``, ``AUTH_TYPE``) it does not.

``max_tokens``, ``TOKENIZERS_PARALLELISM``, ``keyboard`` and ``monkey`` are not credentials. Switch values
under a credential's name (``DISABLE_TOKEN_CACHE=true``, ``auth: none``) are never taken for one, and for
``Bearer X`` (an ``Authorization`` header), ``X`` alone is a credential too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["credential_items", "is_credential_name"]

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_CREDENTIAL_TAILS = (
    "authorization",
    "credential",
    "credentials",
    "passphrase",
    "passwd",
    "password",
    "secret",
    "token",
)
"""Words that make a name a credential's, alone or ending a word run together (``PGPASSWORD``)."""
_QUALIFIERS = frozenset(
    {"access", "api", "app", "auth", "bearer", "client", "master", "private", "secret", "session", "signing"}
)
"""What may run into ``key`` in one word (``apikey``, ``secretkey``); ``monkey`` is no key."""
_LAST_WORDS = frozenset({"auth"})
"""Words that name a credential only as a name's last word (``BASIC_AUTH``, not ``auth_mode``)."""
_NOT_SECRETS = frozenset({"true", "false", "yes", "no", "on", "off", "none", "null"})
"""Switch values under a credential-like name: masking them would hide ordinary text."""
_SCHEME = r"(?i)^(?:Bearer|Basic|Token|Bot)\s+(\S+)$"  # compiled (and cached by ``re``) for the first value


def _is_credential_word(word: str) -> bool:
    return word.endswith(_CREDENTIAL_TAILS) or (word.endswith("key") and word[:-3] in {"", *_QUALIFIERS})


def is_credential_name(name: str) -> bool:
    """Whether values held under ``name`` are credentials (see the module docstring for the rule)."""
    words = [word.lower() for word in _WORD.findall(name)]
    return bool(words) and (any(_is_credential_word(word) for word in words) or words[-1] in _LAST_WORDS)


def credential_items(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """``(path, text)`` for every string held under a credential's name in ``value``, at any depth.

    Each path names where its string was found, dotted below the ``path`` given
    (``provider.headers.Authorization``), so an error can name the option. The name that decides is the
    nearest mapping key: a list's items share their key. Switch values are left out; ``Bearer X`` yields
    the whole value and then ``X``.
    """
    return _items(value, path, "")


def _items(value: Any, path: str, name: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if is_credential_name(name) and value.strip().lower() not in _NOT_SECRETS:
            yield path, value
            scheme = re.match(_SCHEME, value.strip())
            if scheme is not None:
                yield path, scheme[1]
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _items(item, f"{path}.{key}" if path else str(key), str(key))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _items(item, path, name)
