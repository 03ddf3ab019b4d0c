import dataclasses
import json
import math
from pathlib import Path

import pytest

from trialbook._util.hashing import canonical_json, tagged_sha256
from trialbook.agents import AgentSpec
from trialbook.assertions import ran
from trialbook.evalfiles import EvalSpec, ShimSpec, cache_material, render_options, render_prompt
from trialbook.evidence import SCHEMA_VERSION

from .helpers import load, write


def test_canonical_json_is_sorted_compact_utf8() -> None:
    assert canonical_json({"b": 1, "a": ["é", None, 1.5]}) == '{"a":["é",null,1.5],"b":1}'.encode()
    with pytest.raises(ValueError, match="JSON compliant"):
        canonical_json({"x": math.nan})


def test_tagged_sha256() -> None:
    assert tagged_sha256(b"") == "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


@pytest.fixture
def spec(project: Path) -> EvalSpec:
    write(
        project,
        "evals/x.eval.yaml",
        """
        prompt_text: "Deploy {{ project }} with {{ secrets.KEY }}"
        params: {project: demo}
        secrets: [KEY]
        agents:
          - {name: copilot, model: gpt-5.2, env: {KEY: "{{ secrets.KEY }}"}}
        shims: {npm: passthrough, neon: {script: "echo ok"}}
        assert:
          - ran: neon deploy
        """,
    )
    (loaded,) = load("evals")
    return loaded


def key(
    spec: EvalSpec,
    agent: AgentSpec | None = None,
    environ: dict[str, str] | None = None,
    **kwargs: str | None,
) -> str:
    rendered = render_prompt(spec, environ or {"KEY": "s3cret-value"})
    material = cache_material(
        spec,
        agent or spec.agents[0],
        rendered,
        agent_version=kwargs.get("agent_version", "1.0.0"),
        template_tree_hash=kwargs.get("template_tree_hash"),
    )
    return tagged_sha256(canonical_json(material))


def test_the_material_holds_every_ingredient_and_no_secret(spec: EvalSpec) -> None:
    rendered = render_prompt(spec, {"KEY": "s3cret-value"})
    rendered_agent = dataclasses.replace(
        spec.agents[0], options=render_options(spec.agents[0].options, rendered.secret_values)
    )
    material = cache_material(
        spec, rendered_agent, rendered, agent_version="1.0.0", template_tree_hash="sha256:abc"
    )
    assert "s3cret-value" not in json.dumps(material)
    assert material == {
        "cache_format": 1,
        "evidence_schema_version": SCHEMA_VERSION,
        "prompt": "Deploy demo with <secret:KEY>",
        "agent": {
            "name": "copilot",
            "version": "1.0.0",
            "model": "gpt-5.2",
            "options": {"env": {"KEY": "<secret:KEY>"}},
        },
        "template_tree_hash": "sha256:abc",
        "shims": [
            {"name": "neon", "mode": "stub", "script": "echo ok"},
            {"name": "npm", "mode": "passthrough", "script": None},
        ],
        "assertions": [{"kind": "ran", "pattern": "neon deploy"}],
        "trials": 1,
        "pass_rate": 1.0,
        "timeout_s": 600.0,
        "max_cost_usd": None,
    }
    # The unrendered agent (placeholders) and the rendered one (values) give the same material.
    assert (
        cache_material(spec, spec.agents[0], rendered, agent_version="1.0.0", template_tree_hash="sha256:abc")
        == material
    )


def test_the_key_changes_with_what_decides_the_outcome(spec: EvalSpec) -> None:
    base = key(spec)
    assert key(spec, environ={"KEY": "rotated"}) == base
    assert key(dataclasses.replace(spec, id="moved", source=Path("/elsewhere.eval.yaml"))) == base
    changed = [
        key(dataclasses.replace(spec, params={"project": "other"})),
        key(spec, agent_version="1.0.1"),
        key(spec, template_tree_hash="sha256:def"),
        key(spec, agent=dataclasses.replace(spec.agents[0], options={"model": "gpt-6"})),
        key(spec, agent=AgentSpec("codex", spec.agents[0].options)),
        key(dataclasses.replace(spec, shims=(ShimSpec("npm", "stub"),))),
        key(dataclasses.replace(spec, assertions=(ran("neon deploy --prod"),))),
        key(dataclasses.replace(spec, trials=3)),
        key(dataclasses.replace(spec, pass_rate=0.5)),
        key(dataclasses.replace(spec, timeout_s=60.0)),
        key(dataclasses.replace(spec, max_cost_usd=2.0)),
        key(dataclasses.replace(spec, output_limit=1 << 20)),
    ]
    assert base not in changed
    assert len(set(changed)) == len(changed)
    # The default limit, written or not, keeps the key every eval had before limits existed.
    assert key(dataclasses.replace(spec, output_limit=10 * 1024 * 1024)) == base
