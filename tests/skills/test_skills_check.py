"""``trialbook skills check`` through the real command line, and its rules one by one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from trialbook.skills import MAX_DESCRIPTION, Skill, clashes, estimate_tokens, read_skill

from ..runner.conftest import EXAMPLES, Invoke, invoke, write

__all__ = ["invoke"]


def _skill(root: Path, where: str, text: str) -> None:
    write(root / where / "SKILL.md", text)


def _problem_lines(output: str) -> list[str]:
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("error: "))
    return [lines[start].removeprefix("error: "), *lines[start + 1 :]]


def test_four_broken_skills_give_four_errors_with_their_places_and_exit_2(
    invoke: Invoke, tmp_path: Path
) -> None:
    good = "---\nname: deploy\ndescription: Deploys the app with acme. Use when asked to ship it.\n---\n"
    _skill(tmp_path, ".claude/skills/deploy", good)
    _skill(tmp_path, ".github/skills/deploy", good)  # the same skill for Copilot: no clash
    _skill(tmp_path, ".claude/skills/broken", "---\nname: broken\ndescription: [never closed\n---\n")
    _skill(tmp_path, ".claude/skills/wordy", f"---\nname: wordy\ndescription: {'x' * 1100}\n---\n")
    _skill(
        tmp_path,
        ".agents/skills/twin",
        "---\nname: twin\n\ndescription: Deploys  the app with acme. Use when asked to ship it.\n---\n",
    )
    (tmp_path / ".claude/skills/empty").mkdir()
    result = invoke("skills", "check")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    problems = _problem_lines(result.output)
    assert len(problems) == 4, result.output
    expected = {
        ".claude/skills/broken/SKILL.md:3: front matter": "not valid YAML",
        ".claude/skills/wordy/SKILL.md:3: description": "1,100 characters",
        ".claude/skills/empty/SKILL.md: SKILL.md": "holds no SKILL.md",
        ".agents/skills/twin/SKILL.md:4: description": "same description as .claude/skills/deploy/SKILL.md",
    }
    for where, what in expected.items():
        assert any(p.startswith(where) and what in p for p in problems), (where, problems)
    # Every description still read and every instruction file is sized, problems or not.
    assert ".github/skills/deploy/SKILL.md (description)" in result.output


def test_the_examples_pass_and_their_skill_and_sizes_are_listed(invoke: Invoke) -> None:
    result = invoke("skills", "check", str(EXAMPLES))
    assert result.exit_code == 0, result.output
    assert "1 skill(s)" in result.output
    assert ".claude/skills/deploy-guide/SKILL.md (description)" in result.output


def test_instruction_files_are_sized_and_a_root_that_is_no_folder_is_refused(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "AGENTS.md", "a" * 400)
    write(tmp_path / ".github/instructions/py.instructions.md", "b" * 8)
    write(tmp_path / ".github/instructions/notes.md", "not an instruction file")
    result = invoke("skills", "check")
    assert result.exit_code == 0, result.output
    assert "     100  AGENTS.md" in result.output
    assert "       2  .github/instructions/py.instructions.md" in result.output
    assert "notes.md" not in result.output
    refused = invoke("skills", "check", "nowhere")
    assert refused.exit_code == 2
    assert "not a folder" in refused.output


def test_a_fifo_named_skill_md_and_an_oversized_one_are_reported_without_reading_them(
    invoke: Invoke, tmp_path: Path
) -> None:
    (tmp_path / ".claude/skills/pipe").mkdir(parents=True)
    os.mkfifo(tmp_path / ".claude/skills/pipe/SKILL.md")  # reading it would block forever
    write(tmp_path / ".claude/skills/huge/SKILL.md", "x" * (1024 * 1024 + 1))
    result = invoke("skills", "check")
    assert result.exit_code == 2
    problems = _problem_lines(result.output)
    assert any(p.startswith(".claude/skills/pipe/SKILL.md: file: is not a regular file") for p in problems)
    assert any(p.startswith(".claude/skills/huge/SKILL.md: file: is 1,048,577 bytes") for p in problems)


@pytest.mark.parametrize(
    ("front", "line", "field", "words"),
    [
        ("name: Deploy\ndescription: d", 2, "name", "breaks the naming rule"),
        ("name: de--ploy\ndescription: d", 2, "name", "breaks the naming rule"),
        ("name: -deploy\ndescription: d", 2, "name", "breaks the naming rule"),
        (f"name: {'a' * 65}\ndescription: d", 2, "name", "breaks the naming rule"),
        ("name: other\ndescription: d", 2, "name", "differs from its folder"),
        ("description: d", 2, "name", "missing"),
        ("name: deploy", 2, "description", "missing"),
        ("name: deploy\ndescription: '   '", 3, "description", "missing"),
        ("name: deploy\ndescription: [a, b]", 3, "description", "not text"),
        ("name: deploy\ndescription: use <b>this</b>", 3, "description", "XML tag"),
        (f"name: deploy\ndescription: d\ncompatibility: {'c' * 501}", 4, "compatibility", "501 characters"),
        ("- a list", 2, "front matter", "not a mapping"),
    ],
)
def test_each_rule_names_its_field_and_line(front: str, line: int, field: str, words: str) -> None:
    _, problems = read_skill("s/SKILL.md", "deploy", f"---\n{front}\n---\nbody\n")
    assert [(p.line, p.field) for p in problems] == [(line, field)], problems
    assert words in problems[0].message


def test_claude_reserved_words_in_a_name_are_refused() -> None:
    _, problems = read_skill("s/SKILL.md", "claude-helper", "---\nname: claude-helper\ndescription: d\n---\n")
    assert [p.field for p in problems] == ["name"]
    assert "'claude'" in problems[0].message


@pytest.mark.parametrize(
    "text", ["no front matter\n", "---\nname: deploy\ndescription: d\n", "", "--- \nname: x\n"]
)
def test_a_missing_or_unclosed_block_is_one_problem_on_line_1(text: str) -> None:
    skill, problems = read_skill("s/SKILL.md", "deploy", text)
    assert skill is None
    assert [(p.line, p.field) for p in problems] == [(1, "front matter")]


def test_front_matter_nested_past_the_eval_file_depth_limit_is_refused_not_a_crash() -> None:
    deep = "[" * 5000 + "]" * 5000
    skill, problems = read_skill("s/SKILL.md", "deploy", f"---\nname: deploy\ndescription: {deep}\n---\n")
    assert skill is None
    assert [p.field for p in problems] == ["front matter"]


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n"
        for i in range(12)
    )
    skill, problems = read_skill("s/SKILL.md", "deploy", f"---\n{bomb}---\n")
    assert skill is None
    assert [p.field for p in problems] == ["front matter"]


def _made(name: str, description: str, path: str) -> Skill:
    return Skill(path, name, description, 2, 3)


def test_a_copy_of_one_skill_per_agent_is_no_clash_but_two_texts_under_one_name_are() -> None:
    same = [_made("deploy", "Ships it.", ".claude/a"), _made("deploy", "Ships  it.", ".github/a")]
    assert clashes(same) == []
    differing = [_made("deploy", "Ships it.", ".claude/a"), _made("deploy", "Builds it.", ".github/a")]
    [problem] = clashes(differing)
    assert (problem.path, problem.line, problem.field) == (".github/a", 2, "name")


def test_token_estimate_counts_utf8_bytes() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("é" * 2) == 1  # four UTF-8 bytes


_NAMES = st.from_regex(r"[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,4}", fullmatch=True)


@given(name=_NAMES, description=st.text(min_size=1, max_size=MAX_DESCRIPTION).filter(str.strip))
def test_every_name_of_the_rule_with_its_folder_and_a_description_within_the_limit_passes(
    name: str, description: str
) -> None:
    front = yaml.safe_dump({"name": name, "description": description}, allow_unicode=True, width=80)
    text = f"---\n{front}---\n"
    skill, problems = read_skill("s/SKILL.md", name, text)
    problems = [p for p in problems if "XML" not in p.message and "refuses names" not in p.message]
    assert problems == []
    if skill is not None:
        # What any YAML reader makes of the block (PyYAML's emitter folds a few line-break characters).
        written = yaml.safe_load(front)
        assert (skill.name, skill.description) == (written["name"], written["description"])


@given(text=st.text(max_size=2000))
def test_any_text_gives_problems_or_a_skill_never_an_exception(text: str) -> None:
    skill, problems = read_skill("s/SKILL.md", "deploy", text)
    assert skill is not None or problems
    for problem in problems:
        assert problem.line is None or problem.line >= 1
