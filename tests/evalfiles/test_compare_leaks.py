"""A `without` arm whose template brings the dropped file back would compare nothing: it is refused."""

from __future__ import annotations

from pathlib import Path

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]


def _repo(root: Path, exclude: str) -> None:
    write(root / "CLAUDE.md", "Always answer in one word.\n")
    write(root / ".claude/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploys.\n---\nShip.\n")
    write(
        root / "evals/e.eval.yaml",
        "prompt_text: hi\nagents: [literal]\n"
        "instructions: [../CLAUDE.md]\nskills: [../.claude/skills/deploy]\ncompare: without\n"
        f"sandbox: {{template: .., exclude: [{exclude}]}}\n",
    )


def test_a_dropped_file_the_template_still_holds_is_named_as_a_leak(invoke: Invoke, tmp_path: Path) -> None:
    _repo(tmp_path, "evals")
    result = invoke("validate", "evals")
    assert result.exit_code == 2, result.output
    assert "evals/e.eval.yaml:5: compare: the template holds CLAUDE.md" in result.output
    assert "the template holds .claude/skills/deploy" in result.output
    assert "exclude: [CLAUDE.md]" in result.output  # the fix
    ran = invoke("eval", "evals")
    assert ran.exit_code == 2 and "leaks" in ran.output  # no comparison of nothing is run or reported


def test_excluding_them_makes_the_comparison_valid(invoke: Invoke, tmp_path: Path) -> None:
    _repo(tmp_path, "evals, CLAUDE.md, .claude")
    result = invoke("validate", "evals")
    assert result.exit_code == 0, result.output
