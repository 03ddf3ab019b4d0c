"""A repository with instruction files and a skill, each holding a marker, and evals that declare them.

The markers are what a fake model's request log is searched for: a marker in a request means the file's
text reached the model.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

MARKERS = {
    "AGENTS.md": "marker-agents-5b1e",
    "CLAUDE.md": "marker-claude-9c2f",
    ".github/copilot-instructions.md": "marker-copilot-3d7a",
    "docs/copilot-instructions.md": "marker-misplaced-7e44",
    "docs/AGENTS.md": "marker-misplaced-agents-41c8",
    "docs/CLAUDE.md": "marker-misplaced-claude-0d3b",
    "skill": "marker-skill-2a90",
}


def write_repo(root: Path) -> None:
    """The instruction files and the ``deploy-notes`` skill a team would keep in its repository."""
    sources = {
        "AGENTS.md": "AGENTS.md",
        "CLAUDE.md": "CLAUDE.md",
        ".github/copilot-instructions.md": ".github/copilot-instructions.md",
        "docs/copilot-instructions.md": "misplaced/copilot-instructions.md",
        "docs/AGENTS.md": "misplaced/AGENTS.md",
        "docs/CLAUDE.md": "misplaced/CLAUDE.md",
    }
    for placed, source in sources.items():
        target = root / "repo" / source
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"House rule {MARKERS[placed]}: answer in one word.\n", encoding="utf-8")
    skill = root / "repo/skills/deploy-notes/SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(
        f"---\nname: deploy-notes\ndescription: Writes deploy notes {MARKERS['skill']}\n---\n"
        "Write NOTES.md.\n",
        encoding="utf-8",
    )


def write_eval(
    root: Path, name: str, agents: str, *, secrets: list[str] | None = None, checks: tuple[str, ...] = ()
) -> Path:
    """``root/evals/<name>.eval.yaml`` declaring every file of :func:`write_repo` and the skill."""
    text = (
        "prompt_text: Say hello.\n"
        f"secrets: [{', '.join(secrets or [])}]\n"
        "negative_control: false\n"
        "instructions:\n"
        "  - ../repo/AGENTS.md\n"
        "  - ../repo/CLAUDE.md\n"
        "  - ../repo/.github/copilot-instructions.md\n"
        "  - {path: ../repo/misplaced/copilot-instructions.md, to: docs/copilot-instructions.md}\n"
        # Each agent's own kind of file in a folder it does not load instructions from: declared, but
        # out of the agent's reach, so the evidence must say loaded: false.
        "  - {path: ../repo/misplaced/AGENTS.md, to: docs/AGENTS.md}\n"
        "  - {path: ../repo/misplaced/CLAUDE.md, to: docs/CLAUDE.md}\n"
        "skills: [../repo/skills/deploy-notes]\n"
        "agents:\n"
        + textwrap.indent(textwrap.dedent(agents).strip("\n"), "  ")
        + "\ntimeout: 3m\n"
        + ("assert:\n" + "".join(f"  - {check}\n" for check in checks) if checks else "")
    )
    path = root / "evals" / f"{name}.eval.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def markers_in(body: Any) -> set[str]:
    """Which files' markers one recorded request body holds."""
    text = json.dumps(body)
    return {path for path, marker in MARKERS.items() if marker in text}


def loaded_rows(result_json: Path) -> dict[str, bool | None]:
    """``path -> loaded`` from a trial's ``result.json``."""
    data = json.loads(result_json.read_text(encoding="utf-8"))
    return {row["path"]: row["loaded"] for row in data["result"]["instructions_loaded"]}
