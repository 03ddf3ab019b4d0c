"""Agent names are data, never control: a name that could be a workflow command or a mention is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..runner.conftest import Invoke, invoke

__all__ = ["invoke"]


@pytest.mark.parametrize(
    "name",
    ["x\r::error::forged", "x\n::add-mask::y", "@acme/admins", "a b", "-dash", "x" * 65, "ok\x1b[2J"],
)
def test_a_name_that_is_not_a_word_is_refused_with_exit_2_naming_the_field(
    invoke: Invoke, tmp_path: Path, name: str
) -> None:
    (tmp_path / "evals").mkdir()
    quoted = name.encode("unicode_escape").decode("ascii").replace('"', '\\"')
    (tmp_path / "evals/e.eval.yaml").write_text(
        f'prompt_text: hi\nagents: [{{name: "{quoted}", script: "true"}}]\n'
    )
    result = invoke("validate", "evals")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "evals/e.eval.yaml:2: agents[0]:" in result.output and "not a valid agent name" in result.output
    # What the runner would read as lines (it splits at a lone carriage return too) holds no command.
    lines = result.output.replace("\r", "\n").splitlines()
    assert not any(line.lstrip().startswith("::") for line in lines), result.output
    assert "\x1b" not in result.output


def test_names_of_letters_digits_dots_dashes_and_underscores_pass(invoke: Invoke, tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/e.eval.yaml").write_text(
        "prompt_text: hi\nagents: [{name: my_agent.v2-beta, script: 'true'}, literal]\n"
    )
    assert invoke("validate", "evals").exit_code == 0
