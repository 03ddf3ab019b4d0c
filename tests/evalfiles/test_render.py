from pathlib import Path

import pytest

from trialbook.errors import ConfigError
from trialbook.evalfiles import EvalSpec, check_secrets, render_options, render_prompt
from trialbook.evidence import JsonValue

from .helpers import load, write

PROMPT = """\
# Set up {{ project }}

```bash
neon init --project-id {{project}} --api-key {{ secrets.NEON_API_KEY }}
```

In CI, use ${{ secrets.GITHUB_TOKEN }}. Templates look like \\{{ name }}.
"""


def spec_in(project: Path, secrets: str = "[NEON_API_KEY, DB_PASSWORD]") -> EvalSpec:
    write(project, "docs/setup.md", PROMPT)
    body = f"prompt: ../docs/setup.md\nparams: {{project: demo}}\nsecrets: {secrets}\nagents: [literal]\n"
    write(project, "evals/x.eval.yaml", body)
    (spec,) = load("evals")
    return spec


def test_params_and_secrets_are_filled_and_masked(project: Path) -> None:
    spec = spec_in(project)
    rendered = render_prompt(spec, {"NEON_API_KEY": "neon-s3cret", "DB_PASSWORD": "pw-123", "OTHER": "x"})
    assert rendered.text == (
        "# Set up demo\n\n```bash\nneon init --project-id demo --api-key neon-s3cret\n```\n\n"
        "In CI, use ${{ secrets.GITHUB_TOKEN }}. Templates look like {{ name }}.\n"
    )
    assert rendered.masked_text == rendered.text.replace("neon-s3cret", "***")
    assert rendered.for_hash == rendered.text.replace("neon-s3cret", "<secret:NEON_API_KEY>")
    assert rendered.secret_values == {"NEON_API_KEY": "neon-s3cret", "DB_PASSWORD": "pw-123"}
    assert "neon-s3cret" not in repr(rendered)
    assert "neon-s3cret" not in rendered.masked_text + rendered.for_hash


def test_the_hash_form_does_not_change_with_the_secret_value(project: Path) -> None:
    spec = spec_in(project)
    first = render_prompt(spec, {"NEON_API_KEY": "a-secret", "DB_PASSWORD": "b-secret"})
    rotated = render_prompt(spec, {"NEON_API_KEY": "c-secret", "DB_PASSWORD": "d-secret"})
    assert first.for_hash == rotated.for_hash
    assert first.text != rotated.text


def test_unset_secrets_are_named_with_file_and_line(project: Path) -> None:
    spec = spec_in(project, secrets="\n  - NEON_API_KEY\n  - DB_PASSWORD")
    expected = [
        "evals/x.eval.yaml:4: secrets: NEON_API_KEY is not set "
        "(export NEON_API_KEY before running, or add it to the CI job's environment)",
        "evals/x.eval.yaml:5: secrets: DB_PASSWORD is not set "
        "(export DB_PASSWORD before running, or add it to the CI job's environment)",
    ]
    assert check_secrets(spec, {"NEON_API_KEY": ""}) == expected
    assert check_secrets(spec, {"NEON_API_KEY": "key-1234", "DB_PASSWORD": "pw-12345"}) == []
    with pytest.raises(ConfigError) as caught:
        render_prompt(spec, {})
    assert caught.value.problems == expected


def test_agent_options_get_secret_values_at_any_depth() -> None:
    options: dict[str, JsonValue] = {
        "model": "gpt-5.2",
        "env": {"NEON_API_KEY": "{{ secrets.NEON_API_KEY }}", "PLAIN": "{{ not_a_secret }}"},
        "provider": {"headers": ["Bearer {{secrets.TOKEN}}"]},
        "budget": 3,
    }
    rendered = render_options(options, {"NEON_API_KEY": "k1", "TOKEN": "t2"})
    assert rendered == {
        "model": "gpt-5.2",
        "env": {"NEON_API_KEY": "k1", "PLAIN": "{{ not_a_secret }}"},
        "provider": {"headers": ["Bearer t2"]},
        "budget": 3,
    }
    with pytest.raises(ConfigError, match="secrets without a value: MISSING"):
        render_options({"env": {"X": "{{ secrets.MISSING }}"}}, {})


def test_a_secret_containing_another_is_masked_whole(project: Path) -> None:
    write(
        project,
        "evals/x.eval.yaml",
        "prompt_text: '{{ secrets.A }} {{ secrets.B }}'\nsecrets: [A, B]\nagents: [literal]\n",
    )
    (spec,) = load("evals")
    rendered = render_prompt(spec, {"A": "abcd", "B": "abcdefgh"})
    assert rendered.text == "abcd abcdefgh"
    assert rendered.masked_text == "*** ***"
