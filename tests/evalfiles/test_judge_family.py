"""``trialbook validate`` warns when a judge shares a model family with the agent it grades."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from trialbook.cli import cli
from trialbook.evalfiles._judge_family import family_of_model


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-sonnet-4-5", "anthropic"),
        ("anthropic/claude-haiku-4.5", "anthropic"),
        ("gpt-5", "openai"),
        ("o3", "openai"),
        ("o4-mini", "openai"),
        ("gemini-2.5-pro", None),
        ("llama-3", None),
    ],
)
def test_families_are_read_from_model_names(model: str, family: str | None) -> None:
    assert family_of_model(model) == family


@given(st.text(max_size=40))
def test_any_model_name_has_one_family_or_none(model: str) -> None:
    assert family_of_model(model) in ("anthropic", "openai", None)


def _eval(folder: Path, agents: str, judge_model: str) -> None:
    (folder / "evals").mkdir()
    (folder / "evals/x.eval.yaml").write_text(
        f"""prompt_text: explain
agents: {agents}
assert:
  - judge:
      rubric: explains
      judges: [{{provider: openai, model: {judge_model}}}]
"""
    )


@pytest.mark.parametrize(
    ("agents", "judge_model", "warned"),
    [
        ("[claude-code]", "claude-sonnet-4-5", True),
        ("[codex]", "gpt-5", True),
        ("[{name: copilot, model: gpt-5.2}]", "o3", True),
        ("[{name: copilot, model: claude-sonnet-4.5}]", "gpt-5", False),
        ("[claude-code]", "gpt-5", False),
        ("[literal]", "claude-sonnet-4-5", False),
    ],
)
def test_validate_warns_about_a_judge_of_the_graded_agents_family(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agents: str, judge_model: str, warned: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    _eval(tmp_path, agents, judge_model)
    result = CliRunner().invoke(cli, ["validate", "evals"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    warning = "x.eval.yaml:4: assert[0].judge.judges[0]: judge openai:" + judge_model
    assert (warning in result.stderr) is warned, result.stderr
    if warned:
        assert "judges favour their own family's work (pick a judge of another family)" in result.stderr
