"""The run's one masker, fed with every secret of the run before the first trial starts.

Secrets come from three places: the ``secrets:`` each eval declares, credentials written straight into an
agent entry's options (an ``env`` value under a name such as ``OPENAI_API_KEY``), and the variables of the
runner's environment that adapters pass to agent CLIs (provider keys, the GitHub token). Whatever an agent
prints of any of them is masked in every file, stream and GitHub output of the run.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from ..evidence import JsonValue
from ..masking import Masker, credential_items, is_credential_name, length_warning
from ..spec import EvalSpec

__all__ = ["provider_variables", "run_masker", "secret_warnings"]


def provider_variables() -> tuple[str, ...]:
    """Variables of the runner's environment that adapters hand to agents; the credential ones are masked."""
    # From a module of names only: the adapters themselves (the Copilot one loads its SDK) are loaded
    # by the runs that use them, not by every run, `validate` or `list`.
    from ..agents._provider_names import CLAUDE_PASSTHROUGH, CODEX_PASSTHROUGH, COPILOT_VARIABLES

    return (*CLAUDE_PASSTHROUGH, *CODEX_PASSTHROUGH, *COPILOT_VARIABLES)


def _option_secrets(options: Mapping[str, JsonValue]) -> Iterator[str]:
    """Credentials written straight into an agent's options, by the one rule of :mod:`trialbook.masking`."""
    # A {{ secrets.X }} template is a declared secret, masked with its value; literals are masked as is.
    return (value for _, value in credential_items(options) if "{{" not in value)


def run_masker(
    specs: Sequence[EvalSpec], environ: Mapping[str, str], github_token: str | None = None
) -> Masker:
    """A masker holding every secret value the run knows of (see the module docstring)."""
    values = [environ[name] for spec in specs for name in spec.secrets if environ.get(name)]
    for spec in specs:
        for agent in spec.agents:
            values.extend(_option_secrets(dict(agent.options)))
    values.extend(
        environ[name] for name in provider_variables() if is_credential_name(name) and environ.get(name)
    )
    if github_token:
        values.append(github_token)
    return Masker(values)


def secret_warnings(specs: Sequence[EvalSpec], environ: Mapping[str, str]) -> list[str]:
    """One warning per declared secret short enough that masking it hides ordinary words too."""
    warnings: dict[str, str] = {}
    for spec in specs:
        for name in spec.secrets:
            warning = length_warning(name, environ.get(name, ""))
            if warning is not None and name not in warnings:
                warnings[name] = f"secrets: {warning}"
    return list(warnings.values())
