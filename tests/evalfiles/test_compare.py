"""``compare:``: both shapes, names checked against what the eval declares, each mistake at its line."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from trialbook.evalfiles import eval_file_schema
from trialbook.scoring.comparison import COMPARE_ALPHA

from .helpers import load, problems, write

HEAD = "prompt_text: hi\nagents: [literal]\n"


def _repo(project: Path) -> None:
    write(project, "AGENTS.md", "Always run make check.\n")
    write(project, "CLAUDE.md", "Prefer small commits.\n")
    write(project, "skills/deploy/SKILL.md", "---\nname: deploy-app\ndescription: Deploys it.\n---\nRun x.\n")


def _eval(project: Path, body: str) -> Path:
    return write(project, "evals/x.eval.yaml", HEAD + body)


def test_the_bare_word_drops_every_declared_input(project: Path) -> None:
    _repo(project)
    _eval(
        project, "compare: without\ninstructions: [../AGENTS.md, ../CLAUDE.md]\nskills: [../skills/deploy]\n"
    )
    (spec,) = load("evals")
    assert spec.compare is not None
    assert spec.compare.without is None
    assert spec.compare.alpha == COMPARE_ALPHA
    assert spec.compare.dropped(spec.instructions, spec.skills) == ("AGENTS.md", "CLAUDE.md", "deploy-app")


def test_a_list_names_inputs_by_sandbox_path_skill_name_or_as_written(project: Path) -> None:
    _repo(project)
    _eval(
        project,
        "instructions: [../AGENTS.md, ../CLAUDE.md]\nskills: [../skills/deploy]\n"
        "compare: {without: [../CLAUDE.md, deploy-app, AGENTS.md, CLAUDE.md], alpha: 0.1}\n",
    )
    (spec,) = load("evals")
    assert spec.compare is not None
    # Written forms become the names evidence uses; the same input named twice is dropped once.
    assert spec.compare.without == ("CLAUDE.md", "deploy-app", "AGENTS.md")
    assert spec.compare.alpha == 0.1


def test_all_is_the_bare_form(project: Path) -> None:
    _repo(project)
    _eval(project, "instructions: [../AGENTS.md]\ncompare: {without: all}\n")
    (spec,) = load("evals")
    assert spec.compare is not None and spec.compare.without is None


def test_an_undeclared_name_is_an_error_at_its_line_listing_the_declared_ones(project: Path) -> None:
    _repo(project)
    _eval(project, "instructions: [../AGENTS.md]\ncompare:\n  without:\n    - AGENTS.md\n    - CLAUDE.md\n")
    (problem,) = problems("evals")
    assert "x.eval.yaml:7" in problem
    assert "compare.without[1]" in problem
    assert "CLAUDE.md is not a declared instruction file or skill" in problem
    assert "AGENTS.md" in problem.split("CLAUDE.md is not")[1]


def test_compare_without_any_declared_input_is_an_error(project: Path) -> None:
    _eval(project, "compare: without\n")
    (problem,) = problems("evals")
    assert "x.eval.yaml:3" in problem and "compare" in problem
    assert "declares no instruction file or skill" in problem


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ("compare: with\n", "compare", "expected 'without' or a mapping"),
        ("compare: true\n", "compare", "expected 'without' or a mapping"),
        ("compare: {alpha: 0.1}\n", "compare.without", "is missing"),
        ("compare: {without: []}\n", "compare.without", "is empty"),
        ("compare: {without: AGENTS.md}\n", "compare.without", "expected a list"),
        ("compare: {without: [AGENTS.md, AGENTS.md]}\n", "compare.without[1]", "listed twice"),
        ("compare: {without: [7]}\n", "compare.without[0]", "expected a non-empty string"),
        ("compare: {without: all, alpha: 1.5}\n", "compare.alpha", "out of range"),
        ("compare: {without: all, alpha: 0}\n", "compare.alpha", "out of range"),
        ("compare: {without: all, level: 0.1}\n", "compare.level", "level"),
    ],
)
def test_bad_shapes_name_the_field(project: Path, body: str, field: str, words: str) -> None:
    _repo(project)
    _eval(project, "instructions: [../AGENTS.md]\n" + body)
    found = problems("evals")
    assert any(field in p and words in p and "x.eval.yaml:4" in p for p in found), found


def test_the_schema_accepts_what_the_loader_accepts() -> None:
    schema = eval_file_schema()
    ok = [{"without": "all"}, "without", {"without": ["AGENTS.md"], "alpha": 0.1}]
    bad = ["with", {"without": []}, {"alpha": 0.1}, {"without": "all", "alpha": 1}]
    for value in ok:
        jsonschema.validate({"prompt_text": "x", "agents": ["literal"], "compare": value}, schema)
    for value in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"prompt_text": "x", "agents": ["literal"], "compare": value}, schema)
