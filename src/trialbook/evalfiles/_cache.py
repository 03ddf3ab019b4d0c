"""What decides an eval's outcome, as one canonical value: its hash is the cache key."""

from __future__ import annotations

from collections.abc import Mapping

from ..agents import AgentSpec
from ..evidence import SCHEMA_VERSION, JsonObject, JsonValue
from ..sandbox import DEFAULT_OUTPUT_LIMIT
from ._model import EvalSpec
from ._placeholders import fill_secrets, secret_marker
from ._render import RenderedPrompt

__all__ = ["CACHE_FORMAT", "CHECK_ONLY", "cache_material", "trials_material"]

CACHE_FORMAT = 1
"""Bumped when the material's layout changes, so old history lines stop matching rather than match wrongly."""


def _named_secrets(value: JsonValue, secret_values: Mapping[str, str]) -> JsonValue:
    """``value`` with secrets as ``<secret:NAME>``, whether written as placeholders or already rendered."""
    by_length = sorted(secret_values.items(), key=lambda item: len(item[1]), reverse=True)

    def name(text: str) -> str:
        for secret, secret_value in by_length:
            if secret_value:
                text = text.replace(secret_value, secret_marker(secret))
        return text

    def walk(item: JsonValue) -> JsonValue:
        if isinstance(item, str):
            return name(item)
        if isinstance(item, list):
            return [walk(child) for child in item]
        if isinstance(item, dict):
            return {name(key): walk(child) for key, child in item.items()}
        return item

    return walk(fill_secrets(value, secret_marker))


def cache_material(
    spec: EvalSpec,
    agent: AgentSpec,
    rendered: RenderedPrompt,
    *,
    agent_version: str | None,
    template_tree_hash: str | None,
) -> JsonObject:
    """Everything that decides one eval × agent's outcome, with no secret value in it.

    The eval's id and file location are left out on purpose: moving an eval file does not change what
    its trials would do. Hash it with ``tagged_sha256(canonical_json(material))``.
    """
    options = {key: value for key, value in agent.options.items() if key != "model"}
    model = agent.options.get("model")
    return {
        "cache_format": CACHE_FORMAT,
        "evidence_schema_version": SCHEMA_VERSION,
        "prompt": rendered.for_hash,
        "agent": {
            "name": agent.name,
            "version": agent_version,
            "model": _named_secrets(model, rendered.secret_values) if model is not None else None,
            "options": _named_secrets(options, rendered.secret_values),
        },
        "template_tree_hash": template_tree_hash,
        "shims": [
            {"name": shim.name, "mode": shim.mode, "script": shim.script}
            for shim in sorted(spec.shims, key=lambda shim: shim.name)
        ],
        "assertions": [assertion.to_json() for assertion in spec.assertions],
        "trials": spec.trials,
        "pass_rate": spec.pass_rate,
        "timeout_s": spec.timeout_s,
        "max_cost_usd": spec.max_cost_usd,
        # Only when set, so evals with a plain trial count keep the keys they had.
        **({"min_trials": spec.min_trials} if spec.min_trials is not None else {}),
        # Likewise: content, not location, of what is placed into each sandbox.
        **(
            {"instructions": [{"path": f.path, "sha256": f.sha256} for f in spec.instructions]}
            if spec.instructions
            else {}
        ),
        **(
            {"skills": [{"name": s.name, "tree_sha256": s.tree_sha256} for s in spec.skills]}
            if spec.skills
            else {}
        ),
        # Likewise: what checks see of the output can depend on the limit, but the default changes no key.
        **({"output_limit": spec.output_limit} if spec.output_limit != DEFAULT_OUTPUT_LIMIT else {}),
        # A check deadline can turn a slow check into an error; unset, the key stays what it was.
        **({"checks_timeout_s": spec.checks_timeout_s} if spec.checks_timeout_s is not None else {}),
    }


CHECK_ONLY = ("assertions", "checks_timeout_s")
"""What decides only how finished trials are checked, never what an agent does in one."""


def trials_material(material: JsonObject) -> JsonObject:
    """The cache material without what only checks use: what decides the trials themselves.

    Two evals whose materials differ only in :data:`CHECK_ONLY` ask the agent for the same trials, so a
    kept run of one can be re-checked for the other instead of paying the agent again.
    """
    return {key: value for key, value in material.items() if key not in CHECK_ONLY}
