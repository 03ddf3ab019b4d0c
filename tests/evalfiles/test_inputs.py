"""``instructions:`` and ``skills:``: where each file goes, every mistake named, content in the cache key."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trialbook._util.hashing import canonical_json, tagged_sha256
from trialbook.evalfiles import cache_material, input_names, render_prompt, without_inputs
from trialbook.evalfiles._inputs import conventional_place

from .helpers import load, problems, write

HEAD = "prompt_text: hi\nagents: [literal]\n"


def _repo(project: Path) -> None:
    write(project, "AGENTS.md", "Always run make check.\n")
    write(project, "CLAUDE.md", "Prefer small commits.\n")
    write(project, ".github/copilot-instructions.md", "Use tabs.\n")
    write(project, ".github/instructions/py.instructions.md", "---\napplyTo: '**/*.py'\n---\nType hints.\n")
    write(project, "docs/guide.md", "Not an instruction file by name.\n")
    write(project, "skills/deploy/SKILL.md", "---\nname: deploy-app\ndescription: Deploys it.\n---\nRun x.\n")
    write(project, "skills/deploy/scripts/run.sh", "echo deploy\n")
    write(project, "skills/plain/SKILL.md", "Just a body, no front matter.\n")


def test_files_go_where_agents_look_and_skills_keep_their_names(project: Path) -> None:
    _repo(project)
    write(
        project,
        "evals/x.eval.yaml",
        HEAD
        + """
        instructions:
          - ../AGENTS.md
          - ../CLAUDE.md
          - ../.github/copilot-instructions.md
          - ../.github/instructions/py.instructions.md
          - {path: ../docs/guide.md, to: nested/AGENTS.md}
        skills: [../skills/deploy, ../skills/plain/]
        """.replace("\n        ", "\n"),
    )
    (spec,) = load("evals")
    assert [f.path for f in spec.instructions] == [
        "AGENTS.md",
        "CLAUDE.md",
        ".github/copilot-instructions.md",
        ".github/instructions/py.instructions.md",
        "nested/AGENTS.md",
    ]
    assert spec.instructions[0].source == (project / "AGENTS.md").resolve()
    assert spec.instructions[0].sha256 == hashlib.sha256(b"Always run make check.\n").hexdigest()
    deploy, plain = spec.skills
    assert (deploy.name, deploy.description, plain.name, plain.description) == (
        "deploy-app",
        "Deploys it.",
        "plain",
        None,
    )
    assert input_names(spec) == (*[f.path for f in spec.instructions], "deploy-app", "plain")


def test_an_arm_without_some_inputs_keeps_everything_else(project: Path) -> None:
    _repo(project)
    write(
        project,
        "evals/x.eval.yaml",
        HEAD + "instructions: [../AGENTS.md, ../CLAUDE.md]\nskills: [../skills/deploy]\n",
    )
    (spec,) = load("evals")
    no_agents = without_inputs(spec, ["AGENTS.md", "../skills/deploy"])
    assert [f.path for f in no_agents.instructions] == ["CLAUDE.md"]
    assert no_agents.skills == ()
    assert (no_agents.id, no_agents.agents, no_agents.trials) == (spec.id, spec.agents, spec.trials)
    bare = without_inputs(spec)
    assert (bare.instructions, bare.skills) == ((), ())
    with pytest.raises(
        ValueError, match=r"README.md: not a declared .*declared: AGENTS.md, CLAUDE.md, deploy-app"
    ):
        without_inputs(spec, ["README.md"])


def _key(project: Path) -> str:
    (spec,) = load("evals")
    material = cache_material(
        spec, spec.agents[0], render_prompt(spec, {}), agent_version=None, template_tree_hash=None
    )
    return tagged_sha256(canonical_json(material))


def test_the_cache_key_follows_content_not_location(project: Path) -> None:
    _repo(project)
    write(project, "evals/x.eval.yaml", HEAD)
    plain = _key(project)
    write(project, "evals/x.eval.yaml", HEAD + "instructions: [../AGENTS.md]\nskills: [../skills/deploy]\n")
    first = _key(project)
    assert first != plain
    # A moved copy with the same content keeps the key.
    write(project, "elsewhere/AGENTS.md", "Always run make check.\n")
    write(
        project,
        "evals/x.eval.yaml",
        HEAD + "instructions: [../elsewhere/AGENTS.md]\nskills: [../skills/deploy]\n",
    )
    assert _key(project) == first
    write(project, "elsewhere/AGENTS.md", "Always run make check!\n")
    assert _key(project) != first
    # Any file of a skill, not only SKILL.md, is part of the key.
    write(project, "elsewhere/AGENTS.md", "Always run make check.\n")
    write(project, "skills/deploy/scripts/run.sh", "echo deploy --prod\n")
    second = _key(project)
    assert second != first
    # So is a link in it, to a file or to a folder (copied as a link, so its target is what counts).
    os.symlink("scripts", project / "skills/deploy/tools")
    third = _key(project)
    assert third != second
    (project / "skills/deploy/tools").unlink()
    os.symlink("../plain", project / "skills/deploy/tools")
    assert _key(project) not in (second, third)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "instructions: ../AGENTS.md\n",
            "evals/x.eval.yaml:3: instructions: expected a list, got '../AGENTS.md' (a string)",
        ),
        (
            "instructions: [../MISSING.md]\n",
            "evals/x.eval.yaml:3: instructions[0]: trialbook does not know where MISSING.md goes "
            "(name it AGENTS.md, CLAUDE.md, copilot-instructions.md or NAME.instructions.md, or say where "
            "it goes: {path: ../MISSING.md, to: AGENTS.md})",
        ),
        (
            "instructions: [../nope/AGENTS.md]\n",
            "evals/x.eval.yaml:3: instructions[0]: the instruction file ../nope/AGENTS.md does not exist "
            "(looked for nope/AGENTS.md; paths are relative to the eval file)",
        ),
        (
            "instructions: [../docs]\n",
            "evals/x.eval.yaml:3: instructions[0]: trialbook does not know where docs goes",
        ),
        (
            "instructions:\n  - {path: ../docs/guide.md, to: ../AGENTS.md}\n",
            "evals/x.eval.yaml:4: instructions[0].to: '../AGENTS.md' must name a file inside the sandbox",
        ),
        (
            "instructions:\n  - {path: ../docs/guide.md, to: /etc/AGENTS.md}\n",
            "evals/x.eval.yaml:4: instructions[0].to: '/etc/AGENTS.md' is not a relative POSIX path",
        ),
        (
            "instructions:\n  - {path: ../docs/guide.md, to: .git/AGENTS.md}\n",
            "evals/x.eval.yaml:4: instructions[0].to: '.git/AGENTS.md' is inside .git",
        ),
        (
            "instructions:\n  - {to: AGENTS.md}\n",
            "evals/x.eval.yaml:4: instructions[0].path: is missing",
        ),
        (
            "instructions:\n  - {path: ../AGENTS.md, where: x}\n",
            "evals/x.eval.yaml:4: instructions[0].where: unknown key 'where'",
        ),
        (
            "instructions:\n  - ../AGENTS.md\n  - {path: ../docs/guide.md, to: AGENTS.md}\n",
            "evals/x.eval.yaml:5: instructions[1]: AGENTS.md is already placed by instructions[0]",
        ),
        (
            "instructions: [../bad/AGENTS.md]\n",
            "evals/x.eval.yaml:3: instructions[0]: the instruction file ../bad/AGENTS.md cannot be read as "
            "UTF-8 text (UnicodeDecodeError)",
        ),
        (
            "skills: [../skills/missing]\n",
            "evals/x.eval.yaml:3: skills[0]: the skill folder ../skills/missing does not exist",
        ),
        (
            "skills: [../docs]\n",
            "evals/x.eval.yaml:3: skills[0]: the file ../docs/SKILL.md does not exist "
            "(a skill folder holds SKILL.md with name and description)",
        ),
        (
            "skills: [../skills/deploy, ../other/deploy]\n",
            "evals/x.eval.yaml:3: skills[1]: a skill named deploy-app is already declared at skills[0]",
        ),
        (
            "skills: [../skills/badname]\n",
            "evals/x.eval.yaml:3: skills[0]: the skill name 'a/b' is not usable as a folder name",
        ),
        (
            "skills: [../skills/badyaml]\n",
            "evals/x.eval.yaml:3: skills[0]: ../skills/badyaml/SKILL.md: its front matter is not valid YAML",
        ),
    ],
)
def test_each_mistake_names_file_line_field_and_fix(project: Path, body: str, expected: str) -> None:
    _repo(project)
    (project / "bad").mkdir()
    (project / "bad/AGENTS.md").write_bytes(b"\xff\xfe broken")
    write(project, "other/deploy/SKILL.md", "---\nname: deploy-app\n---\n")
    write(project, "skills/badname/SKILL.md", "---\nname: a/b\n---\n")
    write(project, "skills/badyaml/SKILL.md", "---\nname: [unclosed\n---\n")
    write(project, "evals/x.eval.yaml", HEAD + body)
    (found,) = problems("evals")
    assert found.startswith(expected)


def test_oversized_and_special_inputs_are_refused_without_reading_them(project: Path) -> None:
    write(project, "big/AGENTS.md", "x" * (256 * 1024 + 1))
    write(project, "skills/fifo/SKILL.md", "---\nname: fifo\n---\n")
    os.mkfifo(project / "skills/fifo/pipe")
    os.mkfifo(project / "CLAUDE.md")
    write(
        project,
        "evals/x.eval.yaml",
        HEAD + "instructions: [../big/AGENTS.md, ../CLAUDE.md]\nskills: [../skills/fifo]\n",
    )
    found = problems("evals")
    assert found == [
        "evals/x.eval.yaml:3: instructions[0]: the instruction file ../big/AGENTS.md is 262,145 bytes, more "
        "than the limit of 262,144 (looked for big/AGENTS.md; paths are relative to the eval file)",
        "evals/x.eval.yaml:3: instructions[1]: the instruction file ../CLAUDE.md is not a regular file "
        "(looked for CLAUDE.md; paths are relative to the eval file)",
        "evals/x.eval.yaml:4: skills[0]: the skill folder ../skills/fifo holds pipe, which is a FIFO "
        "(named pipe) (keep only the skill's files)",
    ]


def test_python_eval_files_take_the_same_keys(project: Path) -> None:
    _repo(project)
    write(
        project,
        "evals/x.eval.py",
        """
        from trialbook import define_eval, loaded, skill_used
        EVAL = define_eval(
            prompt_text="hi",
            agents=["literal"],
            instructions=["../AGENTS.md"],
            skills=["../skills/deploy"],
            compare="without",
            assert_=[loaded("AGENTS.md"), skill_used("deploy-app")],
        )
        """,
    )
    (spec,) = load("evals")
    assert [f.path for f in spec.instructions] == ["AGENTS.md"]
    assert [s.name for s in spec.skills] == ["deploy-app"]
    assert [a.to_json() for a in spec.assertions] == [
        {"kind": "loaded", "name": "AGENTS.md"},
        {"kind": "skill_used", "name": "deploy-app"},
    ]
    assert spec.compare is not None and spec.compare.without is None
    # As in YAML, a loaded check of an input the eval does not declare could never pass.
    text = (project / "evals/x.eval.py").read_text().replace('loaded("AGENTS.md")', 'loaded("CLAUDE.md")')
    (project / "evals/x.eval.py").write_text(text)
    (found,) = problems("evals")
    assert "loaded: CLAUDE.md is not declared" in found, found


@given(st.text(alphabet="abcAGENTSCLAUDEmd.-_/", max_size=30))
def test_conventional_places_stay_inside_the_sandbox(name: str) -> None:
    place = conventional_place(name)
    if place is not None:
        assert not place.startswith("/")
        assert ".." not in place.split("/")
        assert place.endswith(name)


def test_loaded_must_name_a_declared_input(project: Path) -> None:
    _repo(project)
    body = "instructions: [../AGENTS.md]\nskills: [../skills/deploy]\nassert:\n"
    write(project, "evals/x.eval.yaml", HEAD + body + "  - loaded: AGENTS.md\n  - loaded: deploy-app\n")
    (spec,) = load("evals")
    assert [a.to_json() for a in spec.assertions] == [
        {"kind": "loaded", "name": "AGENTS.md"},
        {"kind": "loaded", "name": "deploy-app"},
    ]
    write(project, "evals/x.eval.yaml", HEAD + body + "  - loaded: CLAUDE.md\n  - skill_used: anything\n")
    assert problems("evals") == [
        "evals/x.eval.yaml:6: assert[0].loaded: CLAUDE.md is not declared (name an instruction file by its "
        "sandbox path or a skill by name (declared: AGENTS.md, deploy-app))"
    ]


def test_a_file_whose_size_says_nothing_is_still_held_to_the_limit(project: Path) -> None:
    # Files under /proc report a size of 0 whatever they hold: the limit is of the bytes actually read.
    write(project, "evals/x.eval.yaml", HEAD + "instructions:\n  - {path: /proc/kallsyms, to: AGENTS.md}\n")
    assert problems("evals") == [
        "evals/x.eval.yaml:4: instructions[0]: the instruction file /proc/kallsyms holds more than the limit "
        "of 262,144 bytes (looked for /proc/kallsyms; paths are relative to the eval file)"
    ]


def test_the_hash_is_of_the_file_as_it_is_line_ends_and_all(project: Path) -> None:
    (project / "AGENTS.md").write_bytes(b"Always run make check.\r\nThen push.\r\n")
    write(project, "evals/x.eval.yaml", HEAD + "instructions: [../AGENTS.md]\n")
    (spec,) = load("evals")
    (placed,) = spec.instructions
    assert placed.text == "Always run make check.\r\nThen push.\r\n"
    assert placed.sha256 == hashlib.sha256((project / "AGENTS.md").read_bytes()).hexdigest()
