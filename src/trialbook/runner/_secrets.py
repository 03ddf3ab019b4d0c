"""The run's one masker, fed with every secret of the run before the first trial starts.

Secrets come from three places: the ``secrets:`` each eval declares, credentials written straight into an
agent entry's options (an ``env`` value under a name such as ``OPENAI_API_KEY``), and the variables of the
runner's environment that adapters pass to agent CLIs (provider keys, the GitHub token). Whatever an agent
prints of any of them is masked in every file, stream and GitHub output of the run.

The same list decides whether the run may start: a value of one to three characters cannot be masked
without masking ordinary text, so it refuses the run, naming where it came from; four to seven characters
run with a warning. Checking the list the masker is fed, and nothing else, means no credential reaches the
masker unchecked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..evalfiles import EvalSpec, display_path, secret_location
from ..evidence import JsonValue
from ..masking import Masker, credential_items, is_credential_name, length_problem, length_warning

__all__ = ["Credential", "RunSecrets", "provider_variables", "run_credentials", "run_masker", "run_secrets"]


def provider_variables() -> tuple[str, ...]:
    """Variables of the runner's environment that adapters hand to agents; the credential ones are masked."""
    # From a module of names only: the adapters themselves (the Copilot one loads its SDK) are loaded
    # by the runs that use them, not by every run, `validate` or `list`.
    from ..agents import CLAUDE_PASSTHROUGH, CODEX_PASSTHROUGH, COPILOT_VARIABLES

    return (*CLAUDE_PASSTHROUGH, *CODEX_PASSTHROUGH, *COPILOT_VARIABLES)


@dataclass(frozen=True)
class Credential:
    """One secret value the masker is fed, with where it came from (never shown: ``value``)."""

    where: str
    """``file:line: field: eval ID`` of an eval file, or ``environment``: the start of every message."""
    name: str
    """The variable or option name the value is held under."""
    value: str = field(repr=False)
    fix: str = ""
    """What else the user may do, beyond a longer value."""

    def problem(self) -> str | None:
        """Why the value cannot be masked (one to three characters), or ``None``."""
        problem = length_problem(self.name, self.value)
        return None if problem is None else f"{self.where}: {problem}{self.fix}"

    def warning(self) -> str | None:
        """A warning for a value masked with the ordinary words holding it (four to seven characters)."""
        warning = length_warning(self.name, self.value)
        return None if warning is None else f"{self.where}: {warning}"


def _declared(spec: EvalSpec, environ: Mapping[str, str]) -> Iterator[Credential]:
    for name in spec.secrets:
        if environ.get(name):  # unset or empty is a missing secret (check_secrets), not a short one
            yield Credential(f"{secret_location(spec, name)}: eval {spec.id}", name, environ[name])


def _in_options(spec: EvalSpec) -> Iterator[Credential]:
    """Credentials written straight into an agent's options, by the one rule of :mod:`trialbook.masking`."""
    for index, agent in enumerate(spec.agents):
        field_path = f"agents[{index}]"
        for path, value in credential_items(dict[str, JsonValue](agent.options), field_path):
            # A {{ secrets.X }} template is a declared secret, checked and masked with its value.
            if "{{" not in value:
                where = f"{display_path(spec.source)}:{spec.line_of(field_path)}: {path}: eval {spec.id}"
                yield Credential(where, path.rpartition(".")[2], value)


def run_credentials(
    specs: Sequence[EvalSpec],
    environ: Mapping[str, str],
    github_token: str | None = None,
    *,
    passed_through: bool = True,
) -> list[Credential]:
    """Every secret value the run knows of (see the module docstring), each with where it came from.

    ``passed_through=False`` leaves out what only a run reads (the provider variables of the environment
    and the GitHub token): what ``validate`` checks.
    """
    credentials = [found for spec in specs for found in (*_declared(spec, environ), *_in_options(spec))]
    if passed_through:
        declared = {name for spec in specs for name in spec.secrets}
        for name in provider_variables():
            # A declared secret of the same name is reported once, with its eval file.
            if is_credential_name(name) and environ.get(name) and name not in declared:
                credentials.append(
                    Credential("environment", name, environ[name], f", or unset {name} (agents are given it)")
                )
        if github_token:
            where = "--github-token (TRIALBOOK_GITHUB_TOKEN)"
            credentials.append(Credential(where, "the GitHub token", github_token))
    return credentials


@dataclass(frozen=True)
class RunSecrets:
    """The run's masker and what its values say about the run: refuse it (``problems``) or warn."""

    masker: Masker
    problems: list[str]
    warnings: list[str]


def run_secrets(
    specs: Sequence[EvalSpec],
    environ: Mapping[str, str],
    github_token: str | None = None,
    *,
    passed_through: bool = True,
) -> RunSecrets:
    """The masker fed with :func:`run_credentials`, with a problem or warning for each value too short."""
    credentials = run_credentials(specs, environ, github_token, passed_through=passed_through)
    problems = list(dict.fromkeys(p for p in (c.problem() for c in credentials) if p is not None))
    warned: dict[tuple[str, str], str] = {}  # a secret several evals declare is warned about once
    for credential in credentials:
        warning = credential.warning()
        if warning is not None:
            warned.setdefault((credential.name, credential.value), warning)
    warnings = list(warned.values())
    return RunSecrets(Masker(c.value for c in credentials), problems, warnings)


def run_masker(
    specs: Sequence[EvalSpec], environ: Mapping[str, str], github_token: str | None = None
) -> Masker:
    """A masker holding every secret value the run knows of; the run itself refuses short ones."""
    return run_secrets(specs, environ, github_token).masker
