"""The one rule for credential names: words decide, however the name is spelled; qualifiers never do."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook.agents._cli_support import secret_values
from trialbook.masking import credential_items, is_credential_name
from trialbook.runner._secrets import provider_variables

CREDENTIAL_WORDS = ["key", "token", "secret", "password", "passwd", "credential", "authorization", "apikey"]
# Words that hold a credential word or look like one, and are not: the substring rule took most of them.
ORDINARY_WORDS = [
    "author", "authority", "oauth", "tokens", "tokenizers", "keyboard", "keys", "monkey", "turkey",
    "secretary", "passwords", "mode", "sock", "name", "email", "max", "git", "ssh", "base", "url", "path",
    "home", "log", "level", "id", "disable", "cache", "file", "x", "openai", "github", "v2",
]  # fmt: skip


def spell(words: list[str], style: int) -> str:
    """One of the spellings names have in env variables, options and headers."""
    if style == 0:
        return "_".join(words).upper()
    if style == 1:
        return "_".join(words)
    if style == 2:
        return "-".join(word.capitalize() for word in words)
    if style == 3:
        return words[0] + "".join(word.capitalize() for word in words[1:])
    return ".".join(words)


ordinary = st.lists(st.sampled_from(ORDINARY_WORDS), min_size=1, max_size=4)
styles = st.integers(min_value=0, max_value=4)


@given(before=ordinary, after=st.lists(st.sampled_from(ORDINARY_WORDS), max_size=3), style=styles,
       word=st.sampled_from(CREDENTIAL_WORDS))  # fmt: skip
def test_a_name_with_a_credential_word_counts_however_it_is_spelled(
    before: list[str], after: list[str], style: int, word: str
) -> None:
    assert is_credential_name(spell([*before, word, *after], style))


@given(words=ordinary, style=styles, auth_first=st.booleans())
def test_a_name_of_ordinary_words_never_counts_nor_does_auth_as_a_qualifier(
    words: list[str], style: int, auth_first: bool
) -> None:
    name = spell(["auth", *words] if auth_first else words, style)
    assert not is_credential_name(name)
    assert list(credential_items({name: "Ada Lovelace", "nested": {name: ["/tmp/agent.sock"]}})) == []


@given(words=ordinary, style=styles)
def test_auth_as_the_last_word_names_the_credential_itself(words: list[str], style: int) -> None:
    assert is_credential_name(spell([*words, "auth"], style))


@pytest.mark.parametrize(
    "name",
    [
        "API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN",
        "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "NPM_TOKEN", "GITHUB_PERSONAL_ACCESS_TOKEN",
        "DB_PASSWORD", "password", "PGPASSWORD", "Authorization", "authorization", "Proxy-Authorization",
        "X-Api-Key", "api-key", "apiKey", "APIKEY", "accessToken", "accesstoken", "AWS_SECRET_ACCESS_KEY",
        "client_secret", "clientSecret", "GOOGLE_APPLICATION_CREDENTIALS", "BASIC_AUTH", "_auth",
        "NPM_CONFIG__AUTH", "SSH_PASSPHRASE", "GHTOKEN", "MYSQLPASSWORD", "privatekey", "secretKey",
    ],
)  # fmt: skip
def test_every_name_the_substring_rule_was_meant_for_still_counts(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize(
    "name",
    ["GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "SSH_AUTH_SOCK", "auth_mode", "AUTH_TYPE", "max_tokens",
     "TOKENIZERS_PARALLELISM", "OAUTH_CLIENT_ID", "PATH", "HOME", "LOG_LEVEL", ""],
)  # fmt: skip
def test_names_that_only_contain_a_credential_like_string_do_not_count(name: str) -> None:
    assert not is_credential_name(name)


def test_every_provider_variable_the_runner_passes_on_is_a_credential_or_an_address() -> None:
    judged = {name: is_credential_name(name) for name in provider_variables()}
    assert judged == {name: not name.endswith("_BASE_URL") for name in provider_variables()}


def test_switch_values_and_templates_are_not_credentials_and_bearer_yields_the_token() -> None:
    options = {
        "auth_mode": "none",
        "DISABLE_TOKEN_CACHE": "true",
        "provider": {"api_key": "sk-0123456789", "headers": {"Authorization": "Bearer tok-0123456789"}},
        "env": {"GIT_AUTHOR_NAME": "Ada Lovelace", "OPENAI_API_KEY": ["sk-list-0123456789"]},
    }
    assert list(credential_items(options)) == [
        ("provider.api_key", "sk-0123456789"),
        ("provider.headers.Authorization", "Bearer tok-0123456789"),
        ("provider.headers.Authorization", "tok-0123456789"),
        ("env.OPENAI_API_KEY", "sk-list-0123456789"),
    ]


def test_the_cli_agents_masker_uses_the_same_rule() -> None:
    env = {"GIT_AUTHOR_NAME": "Ada Lovelace", "SSH_AUTH_SOCK": "/tmp/agent.sock", "OPENAI_API_KEY": "sk-0123"}
    assert secret_values(env) == ("sk-0123",)
