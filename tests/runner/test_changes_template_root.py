"""`template: ..` with `exclude`: each trial's changes.json lists what the agent did, and only that.

The eval sits inside the repository it copies (a real git repository, with earlier runs' folders under
.trialbook), as the docs' own example has it. Three runs in a row must record the same, agent-only
change, with no .git content anywhere in the results.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..runner.gitrepo import git
from .conftest import Invoke, invoke, write

__all__ = ["invoke"]


def test_three_runs_of_a_repository_template_record_the_agents_change_alone(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(tmp_path / "docs/guide.md", "Run `touch made.txt`.\n")
    write(tmp_path / "tools/helper.sh", "echo helper\n")
    write(
        tmp_path / "evals/guide.eval.yaml",
        "prompt_text: follow the guide\n"
        "agents: [{name: s, script: 'touch made.txt && rm docs/guide.md'}]\n"
        "negative_control: false\n"
        "sandbox: {template: .., exclude: [evals, tools]}\n",
    )
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "repo")
    sizes: list[int] = []
    reports: list[int] = []
    for _ in range(3):
        result = invoke("eval", "evals")
        assert result.exit_code == 0, result.output
        latest = tmp_path / ".trialbook/runs/latest"
        changes_file = next(latest.glob("evals/guide/s/trial-1/changes.json"))
        changes = json.loads(changes_file.read_text())
        assert [(e["path"], e["status"]) for e in changes["files"]] == [
            ("docs/guide.md", "deleted"),
            ("made.txt", "created"),
        ]
        sizes.append(changes_file.stat().st_size)
        assert invoke("report", "--html", f"report-{len(sizes)}.html").exit_code == 0
        reports.append((tmp_path / f"report-{len(sizes)}.html").stat().st_size)
        for path in latest.resolve().rglob("*"):
            assert ".git/" not in path.as_posix() and path.name != "HEAD"
    assert len(set(sizes)) == 1  # earlier runs under .trialbook never become part of the record
    # The viewer does not grow with the runs kept before it (only timings and ids differ by a few bytes).
    assert max(reports) - min(reports) < 64, reports
