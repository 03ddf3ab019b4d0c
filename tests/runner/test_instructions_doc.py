"""docs/instructions.md's worked examples, as written: each eval validates, and the one that runs
without a model prints the comparison lines the page shows.
"""

from __future__ import annotations

import re
from pathlib import Path

from .conftest import Invoke, invoke, write

__all__ = ["invoke"]

PAGE = Path(__file__).resolve().parents[2] / "docs/instructions.md"
_BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.DOTALL)


def _blocks(kind: str) -> list[str]:
    return [body for lang, body in _BLOCK.findall(PAGE.read_text(encoding="utf-8")) if lang == kind]


def _evals() -> dict[str, list[str]]:
    """Each YAML example by the file its first line names (``# evals/deploy.eval.yaml``)."""
    found: dict[str, list[str]] = {}
    for body in _blocks("yaml"):
        first = body.splitlines()[0]
        assert first.startswith("# evals/"), first
        found.setdefault(first.removeprefix("# "), []).append(body)
    return found


def _repository(root: Path) -> None:
    """The files the examples declare, where they say."""
    write(root / "AGENTS.md", "Always create the file done. Deploy with make ship, never make deploy.\n")
    write(root / ".github/copilot-instructions.md", "Deploy with make ship.\n")
    skill = "---\nname: deploy\ndescription: Deploys it.\n---\nRun it.\n"
    write(root / ".claude/skills/deploy/SKILL.md", skill)


def test_every_example_eval_on_the_page_validates(invoke: Invoke, tmp_path: Path) -> None:
    examples = _evals()
    assert set(examples) == {"evals/deploy.eval.yaml", "evals/follow.eval.yaml"}
    _repository(tmp_path)
    bodies = [body for bodies in examples.values() for body in bodies]
    assert len(bodies) == 3
    for body in bodies:
        write(tmp_path / "evals/example.eval.yaml", body)
        result = invoke("validate", "evals")
        assert result.exit_code == 0, (body, result.output)


def test_the_example_without_a_model_prints_what_the_page_shows(invoke: Invoke, tmp_path: Path) -> None:
    (body,) = _evals()["evals/follow.eval.yaml"]
    _repository(tmp_path)
    write(tmp_path / "evals/follow.eval.yaml", body)
    (shown,) = [text for text in _blocks("") if "trialbook eval evals/follow.eval.yaml" in text]
    command, *printed = shown.splitlines()
    assert command == "$ CI=true trialbook eval evals/follow.eval.yaml"
    result = invoke("eval", "evals/follow.eval.yaml")
    assert result.exit_code == 0, result.output
    lines = [line for line in printed if line not in ("…", "")]
    assert lines[0] == "with and without:" and len(lines) == 3
    output = result.output.splitlines()
    start = output.index("with and without:")
    assert output[start : start + 3] == lines
