"""Every credential the run's masker is fed is checked for length: 1–3 characters refuse, 4–7 warn.

Through the real CLI with a script agent that leaves a mark when it starts, so a refusal is shown to have
started nothing: no agent, no run folder, no results.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Invoke, write

# A value no message may show: each test checks the refusal names the field, never the value.
VALUES = {3: "q7Z", 4: "q7Zx", 7: "q7Zx9Wv", 8: "q7Zx9Wvk"}


def _eval(root: Path, *, env: dict[str, str] | None = None, extra: str = "") -> Path:
    """An eval whose script agent touches ``started`` outside the sandbox, and ``done`` in it."""
    started = root / "started"
    agent = {"name": "fake", "script": f"touch done {started}"}
    if env is not None:
        agent["env"] = env  # type: ignore[assignment]
    write(
        root / "evals/key.eval.yaml",
        f"""
        prompt_text: do the task
        agents: [{json.dumps(agent)}]
        assert:
          - succeeds: {{command: "test -f done"}}
        {extra}
        """,
    )
    return started


def _nothing_ran(root: Path, started: Path) -> None:
    assert not started.exists(), "the agent started"
    assert not (root / ".trialbook/runs").exists(), "a run folder was made"
    assert not (root / "results").exists()


@pytest.mark.parametrize("source", ["option", "environment"])
@pytest.mark.parametrize("length", [1, 3])
def test_a_credential_of_one_to_three_characters_refuses_eval_and_starts_nothing(
    invoke: Invoke, tmp_path: Path, source: str, length: int
) -> None:
    value = VALUES[3][:length]
    if source == "option":
        started = _eval(tmp_path, env={"OPENAI_API_KEY": value})
        named = "evals/key.eval.yaml:2: agents[0].env.OPENAI_API_KEY: eval key: OPENAI_API_KEY is"
        result = invoke("eval", "evals", "--results-dir", "results")
    else:
        started = _eval(tmp_path)
        named = "environment: OPENAI_API_KEY is"
        result = invoke("eval", "evals", "--results-dir", "results", env={"OPENAI_API_KEY": value})
    assert result.exit_code == 2, result.output
    assert named in result.output
    assert f"{length} character{'s' if length > 1 else ''} long, too short to mask" in result.output
    assert "use a value of at least 4" in result.output
    assert "Traceback" not in result.output
    assert VALUES[3] not in result.output
    _nothing_ran(tmp_path, started)


@pytest.mark.parametrize("source", ["option", "environment"])
@pytest.mark.parametrize(("length", "warned"), [(4, True), (7, True), (8, False)])
def test_a_credential_of_four_characters_or_more_runs_and_warns_below_eight(
    invoke: Invoke, tmp_path: Path, source: str, length: int, warned: bool
) -> None:
    value = VALUES[length]
    if source == "option":
        started = _eval(tmp_path, env={"OPENAI_API_KEY": value})
        result = invoke("eval", "evals", "--results-dir", "results")
        named = "agents[0].env.OPENAI_API_KEY: eval key: OPENAI_API_KEY is"
    else:
        started = _eval(tmp_path)
        result = invoke("eval", "evals", "--results-dir", "results", env={"OPENAI_API_KEY": value})
        named = "environment: OPENAI_API_KEY is"
    assert result.exit_code == 0, result.output
    assert started.exists()
    assert (f"{named} {length} characters long: any text containing its value" in result.output) is warned
    assert ("characters long" in result.output) is warned
    assert value not in result.output


def test_a_provider_api_key_in_options_is_refused_by_validate_naming_the_field(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(
        tmp_path / "evals/byok.eval.yaml",
        """
        prompt_text: do the task
        agents:
          - name: copilot
            provider: {type: openai, base_url: "http://127.0.0.1:9", api_key: q7Z}
        assert:
          - succeeds: {command: "true"}
        """,
    )
    result = invoke("validate", "evals")
    assert result.exit_code == 2, result.output
    assert "evals/byok.eval.yaml:3: agents[0].provider.api_key: eval byok: api_key is 3 characters" in (
        result.output
    )
    assert "q7Z" not in result.output and "Traceback" not in result.output
    as_json = json.loads(invoke("validate", "evals", "--json").output)
    assert as_json["ok"] is False
    assert as_json["problems"][0]["field"] == "agents[0].provider.api_key"
    # Before any availability check of the Copilot CLI: the same refusal, nothing started.
    result = invoke("eval", "evals", "--results-dir", "results")
    assert result.exit_code == 2 and "agents[0].provider.api_key" in result.output
    assert not (tmp_path / ".trialbook/runs").exists()


def test_validate_reads_files_and_declared_secrets_only_not_what_a_run_passes_to_agents(
    invoke: Invoke, tmp_path: Path
) -> None:
    _eval(tmp_path, env={"OPENAI_API_KEY": "q7Zx9"})
    result = invoke("validate", "evals", env={"OPENAI_API_KEY": "ab"})
    assert result.exit_code == 0, result.output
    assert "agents[0].env.OPENAI_API_KEY: eval key: OPENAI_API_KEY is 5 characters long" in result.output
    assert "environment" not in result.output


def test_dry_run_lists_every_short_credential_as_a_refusal_and_starts_nothing(
    invoke: Invoke, tmp_path: Path
) -> None:
    started = _eval(tmp_path, env={"CODEX_API_KEY": "q7"})
    result = invoke("eval", "evals", "--dry-run", env={"ANTHROPIC_API_KEY": "q7Z"})
    assert result.exit_code == 2, result.output
    refused = result.output.split("the real run would refuse to start:")[1]
    assert "agents[0].env.CODEX_API_KEY: eval key: CODEX_API_KEY is 2 characters long" in refused
    assert "environment: ANTHROPIC_API_KEY is 3 characters long" in refused
    assert "Traceback" not in result.output
    _nothing_ran(tmp_path, started)


def test_a_short_github_token_refuses_the_run(invoke: Invoke, tmp_path: Path) -> None:
    started = _eval(tmp_path)
    result = invoke("eval", "evals", "--results-dir", "results", "--github-token", "q7Z")
    assert result.exit_code == 2, result.output
    assert "--github-token (TRIALBOOK_GITHUB_TOKEN): the GitHub token is 3 characters long" in result.output
    _nothing_ran(tmp_path, started)


def test_empty_values_stay_missing_not_short(invoke: Invoke, tmp_path: Path) -> None:
    started = _eval(tmp_path, env={"OPENAI_API_KEY": ""})
    result = invoke("eval", "evals", "--results-dir", "results", env={"ANTHROPIC_API_KEY": ""})
    assert result.exit_code == 0, result.output
    assert started.exists() and "characters long" not in result.output


def test_a_declared_secret_is_reported_once_with_its_eval_file_not_again_as_environment(
    invoke: Invoke, tmp_path: Path
) -> None:
    _eval(tmp_path, extra="secrets: [OPENAI_API_KEY]")
    result = invoke("eval", "evals", env={"OPENAI_API_KEY": "q7"})
    assert result.exit_code == 2, result.output
    assert "secrets: eval key: OPENAI_API_KEY is 2 characters long" in result.output
    assert "environment:" not in result.output


@pytest.mark.parametrize("padded", ["q7Z\n", "  q7Z  ", "\tq7\r\n"])
def test_whitespace_around_a_short_credential_does_not_make_it_long_enough(
    invoke: Invoke, tmp_path: Path, padded: str
) -> None:
    """``$(cat key)`` keeps a newline, and ``echo $KEY`` prints the value stripped: that one is the secret."""
    started = _eval(tmp_path)
    result = invoke("eval", "evals", "--results-dir", "results", env={"OPENAI_API_KEY": padded})
    assert result.exit_code == 2, result.output
    length = len(padded.strip())
    assert f"{length} characters long without its surrounding whitespace, too short" in result.output
    _nothing_ran(tmp_path, started)
