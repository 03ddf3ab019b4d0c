"""docs/github-action.md against the action: every input and output listed, its workflows lint clean."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from ..runner.gitrepo import git
from .test_workflows import ACTION, actionlint, load, zizmor

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs/github-action.md"
PINNED_HERE = "OWNER/trialbook@<commit sha> # v0.1.0"
_BLOCK = re.compile(r"<!-- workflow: ([\w.-]+\.yml) -->\n```yaml\n(.*?)```", re.S)


def _table(heading: str) -> list[str]:
    """The first-column names of the docs table whose header row starts with ``| heading |``."""
    text = DOCS.read_text()
    start = text.index(f"| {heading} |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        rows.append(line.split("|")[1].strip().strip("`"))
    return rows


def documented_workflows() -> dict[str, str]:
    """The workflows docs/github-action.md shows, by file name, with `uses: ./` for the pinned action."""
    return {name: body.replace(PINNED_HERE, "./") for name, body in _BLOCK.findall(DOCS.read_text())}


def test_every_input_and_output_is_in_the_docs_tables_and_nothing_else() -> None:
    action = load(ACTION)
    inputs, outputs = _table("Input"), _table("Output")
    assert sorted(inputs) == sorted(action["inputs"]), "docs/github-action.md: the Input table"
    assert len(inputs) == len(set(inputs))
    assert sorted(outputs) == sorted(action["outputs"]), "docs/github-action.md: the Output table"


def test_the_docs_show_a_complete_workflow_and_the_fork_publisher() -> None:
    workflows = documented_workflows()
    assert sorted(workflows) == ["evals-publish.yml", "evals.yml"]
    evals = yaml.safe_load(workflows["evals.yml"])
    on = evals[True]
    assert {"schedule", "workflow_dispatch", "pull_request"} <= set(on)
    assert on["workflow_dispatch"]["inputs"]["force"]["type"] == "boolean"
    jobs = evals["jobs"]
    steps = {name: [s for s in job["steps"] if s.get("uses") == "./"] for name, job in jobs.items()}
    assert "matrix" in jobs["shards"]["strategy"] and "mode" not in steps["shards"][0]["with"]  # run
    assert jobs["publish"]["needs"] == ["shards", "pull-request"]
    assert steps["publish"][0]["with"]["mode"] == "publish" and "results" in steps["publish"][0]["with"]
    # The boundary: jobs that run agents can write nothing; the one that can runs none.
    for name in ("shards", "pull-request"):
        assert jobs[name]["permissions"] == {"contents": "read"} and jobs[name]["environment"] == "agents"
    assert jobs["publish"]["permissions"] == {"contents": "write", "pull-requests": "write"}
    assert "secrets." not in yaml.safe_dump(jobs["publish"])
    for name in ("shards", "pull-request"):
        assert "install" in steps[name][0]["with"] and "ANTHROPIC_API_KEY" in steps[name][0]["env"]
    assert steps["pull-request"][0]["with"]["label"] == "run-evals"
    assert "concurrency" not in evals
    publisher = yaml.safe_load(workflows["evals-publish.yml"])
    assert publisher[True]["workflow_run"]["workflows"] == ["evals"]
    declared = set(load(ACTION)["inputs"])
    for workflow in (evals, publisher):
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                if step.get("uses") == "./":
                    assert set(step.get("with", {})) <= declared, step


def test_the_docs_workflows_pass_actionlint_and_zizmor(tmp_path: Path) -> None:
    folder = tmp_path / ".github/workflows"
    folder.mkdir(parents=True)
    for name, body in documented_workflows().items():
        (folder / name).write_text(body)
    shutil.copy(ACTION, tmp_path / "action.yml")  # actionlint checks `with:` against the local action,
    git(tmp_path, "init", "-q")  # found at the repository root, which it finds by .git
    linted = actionlint(*sorted(folder.iterdir()), cwd=tmp_path)
    assert linted.returncode == 0, linted.stdout + linted.stderr
    audited = zizmor(*sorted(folder.iterdir()))
    assert audited.returncode == 0, audited.stdout + audited.stderr
