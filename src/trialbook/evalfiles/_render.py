"""Rendering a loaded eval's prompt and agent options with params and secrets from the environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..evidence import JsonValue
from ..masking import MASK, Masker
from ._model import EvalSpec
from ._placeholders import fill, fill_secrets, secret_marker
from ._problems import display_path

__all__ = ["MASK", "RenderedPrompt", "check_secrets", "render_options", "render_prompt", "secret_location"]


@dataclass(frozen=True)
class RenderedPrompt:
    """One prompt in its three forms.

    ``text`` goes to the agent; ``masked_text`` is what may be written or shown; ``for_hash`` names
    secrets (``<secret:NAME>``) instead of holding them, so it can go into cache keys and change
    detection without a rotated key re-running every eval. Fields holding secrets stay out of ``repr``.
    """

    text: str = field(repr=False)
    masked_text: str
    for_hash: str
    secret_values: dict[str, str] = field(repr=False)


def check_secrets(spec: EvalSpec, environ: Mapping[str, str]) -> list[str]:
    """A problem for each declared secret that is unset or empty in ``environ``.

    Run before any trial: an eval whose secret is missing would fail in a way that looks like the agent's
    fault. An empty value counts as unset, since masking an empty string is impossible. A value too short
    to mask is refused by the run where its masker is fed (``trialbook.runner._secrets``).
    """
    problems = []
    for name in spec.secrets:
        if not environ.get(name):
            problems.append(
                f"{secret_location(spec, name)}: {name} is not set "
                f"(export {name} before running, or add it to the CI job's environment)"
            )
    return problems


def secret_location(spec: EvalSpec, name: str) -> str:
    """``file:line: secrets``, where ``spec`` declares the secret ``name``: the start of its messages."""
    return f"{display_path(spec.source)}:{spec.line_of('secrets.' + name)}: secrets"


def render_prompt(spec: EvalSpec, environ: Mapping[str, str]) -> RenderedPrompt:
    """Fill the prompt's placeholders with ``spec.params`` and the declared secrets from ``environ``.

    Raises:
        ConfigError: a declared secret is unset or empty, naming the file and the secret.
    """
    problems = check_secrets(spec, environ)
    if problems:
        raise ConfigError(problems)
    secrets = {name: environ[name] for name in spec.secrets}
    text = fill(spec.prompt_template, spec.params, secrets)
    for_hash = fill(spec.prompt_template, spec.params, {name: secret_marker(name) for name in spec.secrets})
    return RenderedPrompt(
        text=text,
        masked_text=Masker(secrets.values()).text(text),
        for_hash=for_hash,
        secret_values=secrets,
    )


def render_options(
    options: Mapping[str, JsonValue], secret_values: Mapping[str, str]
) -> dict[str, JsonValue]:
    """Agent options with every ``{{ secrets.NAME }}`` filled in, at any depth (``env`` values, mostly).

    Raises:
        ConfigError: an option names a secret that has no value; loading rejects undeclared secrets, so
            this means the options did not come from a loaded eval.
    """
    missing: list[str] = []

    def value_of(name: str) -> str:
        if name not in secret_values:
            missing.append(name)
            return ""
        return secret_values[name]

    rendered = fill_secrets(dict(options), value_of)
    if missing:
        names = ", ".join(dict.fromkeys(missing))
        raise ConfigError(
            f"agent options: secrets without a value: {names} (declare them under secrets: and set them)"
        )
    assert isinstance(rendered, dict)
    return rendered
