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
