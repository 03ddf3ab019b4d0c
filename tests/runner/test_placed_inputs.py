"""Declared instruction files and skills are in every trial's sandbox, and the evidence lists each one."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .conftest import Invoke, invoke, write

__all__ = ["invoke"]

PROMPT = """
```sh
cat AGENTS.md .github/copilot-instructions.md .agents/skills/notes/SKILL.md > seen.txt
```
"""


def _eval(tmp_path: Path, template: str = "") -> None:
    write(tmp_path / "repo/AGENTS.md", "declared agents rule\n")
    write(tmp_path / "repo/.github/copilot-instructions.md", "declared copilot rule\n")
    write(
        tmp_path / "repo/skills/notes/SKILL.md", "---\nname: notes\ndescription: Notes.\n---\nWrite notes.\n"
    )
    write(tmp_path / "repo/skills/notes/run.sh", "echo notes\n")
    write(tmp_path / "evals/prompt.md", PROMPT)
    write(
        tmp_path / "evals/placed.eval.yaml",
        f"""
        prompt: prompt.md
        agents: [literal]
        trials: 2
        negative_control: false
        {template}
        instructions: [../repo/AGENTS.md, ../repo/.github/copilot-instructions.md]
        skills: [../repo/skills/notes]
        assert:
          - file_contains: {{path: seen.txt, pattern: declared agents rule}}
          - file_contains: {{path: seen.txt, pattern: declared copilot rule}}
          - file_exists: .agents/skills/notes/run.sh
        """,
    )


def test_every_trial_gets_the_declared_files_and_null_rows_without_an_audit(
    invoke: Invoke, tmp_path: Path
) -> None:
    # The template's own AGENTS.md is replaced by the declared one.
    write(tmp_path / "template/AGENTS.md", "the template's old rule\n")
    _eval(tmp_path, "sandbox: {template: ../template}")
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    for trial in (1, 2):
        folder = tmp_path / f".trialbook/runs/latest/evals/placed/literal/trial-{trial}"
        rows = json.loads((folder / "result.json").read_text())["result"]["instructions_loaded"]
        assert [(r["path"], r["kind"], r["loaded"]) for r in rows] == [
            ("AGENTS.md", "instructions", None),
            (".github/copilot-instructions.md", "instructions", None),
            (".agents/skills/notes", "skill", None),
        ]
        assert rows[0]["sha256"] == hashlib.sha256(b"declared agents rule\n").hexdigest()
        # What trialbook placed is the starting point of the change record, not something the agent made.
        changes = json.loads((folder / "changes.json").read_text())
        assert [entry["path"] for entry in changes["files"]] == ["seen.txt"]
    assert (tmp_path / "template/AGENTS.md").read_text() == "the template's old rule\n"


def test_a_template_symlink_cannot_carry_a_placed_file_out_of_the_sandbox(
    invoke: Invoke, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "template").mkdir()
    os.symlink(outside, tmp_path / "template/.github")
    _eval(tmp_path, "sandbox: {template: ../template}")
    result = invoke("eval", "evals")
    assert result.exit_code == 1, result.output
    assert list(outside.iterdir()) == []
    folder = tmp_path / ".trialbook/runs/latest/evals/placed/literal/trial-1"
    error = json.loads((folder / "result.json").read_text())["result"]["error"]
    assert "placing the eval's instruction files and skills failed" in error
    assert "outside the sandbox" in error


NOTES_SKILL = "---\nname: notes\ndescription: Notes.\n---\nWrite notes.\n"
SEEN = """
```sh
for f in AGENTS.md CLAUDE.md; do echo "$f: $(cat $f)"; done > seen.txt
ls -la .agents/skills >> seen.txt
cat .agents/skills/notes/SKILL.md >> seen.txt
echo "agent was here" >> AGENTS.md
echo "agent was here" >> .agents/skills/notes/SKILL.md
```
"""


def _linked_eval(tmp_path: Path) -> Path:
    """An eval declaring AGENTS.md, CLAUDE.md and a skill, whose trials print what they find."""
    write(tmp_path / "evals/prompt.md", SEEN)
    return write(
        tmp_path / "evals/linked.eval.yaml",
        """
        prompt: prompt.md
        agents: [literal]
        negative_control: false
        sandbox: {template: ../template}
        instructions: [../repo/AGENTS.md, ../repo/CLAUDE.md]
        skills: [../repo/skills/notes]
        assert:
          - file_contains: {path: seen.txt, pattern: "AGENTS.md: declared agents rule"}
          - file_contains: {path: seen.txt, pattern: "CLAUDE.md: declared claude rule"}
          - file_contains: {path: seen.txt, pattern: Write notes.}
          - file_exists: keep/kept.txt
        """,
    )


def test_a_template_symlink_at_a_placed_path_is_replaced_not_written_through(
    invoke: Invoke, tmp_path: Path
) -> None:
    # A repository keeping AGENTS.md as a link to CLAUDE.md, and its skills folder as a link to another
    # folder: the declared files replace the links, and what the links pointed at is left as it was.
    write(tmp_path / "repo/AGENTS.md", "declared agents rule\n")
    write(tmp_path / "repo/CLAUDE.md", "declared claude rule\n")
    write(tmp_path / "repo/skills/notes/SKILL.md", NOTES_SKILL)
    write(tmp_path / "template/CLAUDE.md", "the template's claude rule\n")
    os.symlink("CLAUDE.md", tmp_path / "template/AGENTS.md")
    write(tmp_path / "template/keep/kept.txt", "kept\n")
    (tmp_path / "template/.agents/skills").mkdir(parents=True)
    os.symlink("../../keep", tmp_path / "template/.agents/skills/notes")
    _linked_eval(tmp_path)
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    # Its checks passed: each file holds its own declared text, and keep/ is still there.
    assert os.readlink(tmp_path / "template/AGENTS.md") == "CLAUDE.md"  # the template is untouched
    _assert_only_the_agents_edits(tmp_path)


def _assert_only_the_agents_edits(tmp_path: Path) -> None:
    """The change record shows what the agent did, nothing of what placing replaced."""
    folder = tmp_path / ".trialbook/runs/latest/evals/linked/literal/trial-1"
    changes = json.loads((folder / "changes.json").read_text())
    assert [(entry["path"], entry["status"]) for entry in changes["files"]] == [
        (".agents/skills/notes/SKILL.md", "modified"),
        ("AGENTS.md", "modified"),
        ("seen.txt", "created"),
    ]
    for entry in changes["files"][:2]:
        assert entry["diff"].endswith("+agent was here\n"), entry["diff"]


def test_placed_files_are_regular_files_even_when_the_declared_ones_are_links_out_of_the_repository(
    invoke: Invoke, tmp_path: Path
) -> None:
    # The declared AGENTS.md and the skill's SKILL.md are absolute links to files outside the repository.
    # Each trial gets their text as files of its own: an agent editing them edits its sandbox only, and
    # trialbook never writes through a link either.
    outside = tmp_path / "outside"
    write(outside / "AGENTS.md", "declared agents rule\n")
    write(outside / "SKILL.md", NOTES_SKILL)
    write(tmp_path / "repo/CLAUDE.md", "declared claude rule\n")
    (tmp_path / "repo/skills/notes").mkdir(parents=True)
    os.symlink(outside / "AGENTS.md", tmp_path / "repo/AGENTS.md")
    os.symlink(outside / "SKILL.md", tmp_path / "repo/skills/notes/SKILL.md")
    write(tmp_path / "template/keep/kept.txt", "kept\n")
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()}
    _linked_eval(tmp_path)
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in outside.iterdir()}
    assert after == before
    folder = tmp_path / ".trialbook/runs/latest/evals/linked/literal/trial-1"
    rows = json.loads((folder / "result.json").read_text())["result"]["instructions_loaded"]
    assert rows[0]["sha256"] == hashlib.sha256(b"declared agents rule\n").hexdigest()
    _assert_only_the_agents_edits(tmp_path)


def test_an_instruction_file_placed_inside_a_skill_folder_is_there_for_the_agent(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "repo/skills/notes/SKILL.md", NOTES_SKILL)
    write(tmp_path / "repo/skills/notes/style.md", "the skill's own style\n")
    write(tmp_path / "repo/house-style.md", "the house style\n")
    write(tmp_path / "evals/prompt.md", "```sh\ncat .agents/skills/notes/style.md > seen.txt\n```\n")
    write(
        tmp_path / "evals/inside.eval.yaml",
        """
        prompt: prompt.md
        agents: [literal]
        negative_control: false
        instructions: [{path: ../repo/house-style.md, to: .agents/skills/notes/style.md}]
        skills: [../repo/skills/notes]
        assert:
          - file_contains: {path: seen.txt, pattern: the house style}
        """,
    )
    result = invoke("eval", "evals")
    assert result.exit_code == 0, result.output
    folder = tmp_path / ".trialbook/runs/latest/evals/inside/literal/trial-1"
    rows = json.loads((folder / "result.json").read_text())["result"]["instructions_loaded"]
    assert [row["path"] for row in rows] == [".agents/skills/notes/style.md", ".agents/skills/notes"]
    changes = json.loads((folder / "changes.json").read_text())
    assert [entry["path"] for entry in changes["files"]] == ["seen.txt"]
