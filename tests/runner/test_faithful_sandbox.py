"""Faithful sandboxes end to end: a guide under `uv run trialbook` sees the machine's Python, not
trialbook's; a repository used as template is cached across runs; an unused shim is noted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from .conftest import Invoke, write
from .gitrepo import git

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")


def _uv() -> str:
    # `uv run pytest` names its own binary in UV; calling it directly keeps version managers' shims
    # (which put their own Python first on PATH) out of the picture.
    found = os.environ.get("UV") or shutil.which("uv")
    assert found, "uv runs trialbook's tests; .ci/run installs it"
    return found


def test_a_guide_run_under_uv_run_sees_no_trialbook_interpreter(tmp_path: Path) -> None:
    assert SYSTEM_PYTHON.exists(), "the machine's python3 (Debian's python3, with python3-venv)"
    write(
        tmp_path / "evals/python-guide.eval.yaml",
        """
        prompt_text: |
          Check that nothing is installed yet, then make a virtualenv:
          ```bash
          if python3 -c "import click" 2>/dev/null; then echo "click importable before install"; exit 9; fi
          python3 -c "import sys; print('prefix', sys.prefix)"
          ```
          ```bash
          python3 -m venv .venv && .venv/bin/pip --version
          ```
        agents: [literal]
        assert:
          - succeeds: "test -x .venv/bin/pip"
        """,
    )
    env = {
        "PATH": f"{SYSTEM_PYTHON.parent}:/bin",
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "CI": "true",
        "UV_NO_PROGRESS": "1",
    }
    done = subprocess.run(
        [
            _uv(),
            "run",
            "--frozen",
            "--project",
            str(ROOT),
            "trialbook",
            "eval",
            "evals",
            "--results-dir",
            "results",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    trial = tmp_path / "results/evals/python-guide/literal/trial-1"
    # The steps' outputs, each stored once in its step file (literal.log names them).
    log = "".join(path.read_text() for path in sorted(trial.glob("literal/step-*.out")))
    assert done.returncode == 0, done.stdout + done.stderr + log
    assert f"prefix {ROOT / '.venv'}" not in log
    assert "pip " in log and ".venv/lib" in log  # the new virtualenv's own pip


def test_a_repository_as_template_is_cached_on_the_second_run(invoke: Invoke, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-b", "main")
    write(repo / "README.md", "starter\n")
    write(
        repo / "evals/repo.eval.yaml",
        """
        prompt_text: |
          ```bash
          ls -A > listing.txt
          test ! -e .git && test ! -e .trialbook && test ! -e scratch
          ```
        agents: [literal]
        sandbox: {template: .., exclude: [scratch]}
        shims:
          gh: passthrough
        assert:
          - file_contains: {path: listing.txt, pattern: README.md}
        """,
    )
    commit_all_local(repo)
    os.chdir(repo)
    history = tmp_path / "history"
    first = invoke("eval", "evals", "--history-dir", str(history), "--summary", str(tmp_path / "s.md"))
    assert first.exit_code == 0, first.output
    assert (repo / ".trialbook/runs/latest/evals/repo/literal/trial-1/literal.log").exists()
    # The note for the shim that was never called, in the terminal, the summary and the trial's result.
    assert "note: repo [literal]: shim gh was declared but not called in its trial" in first.output
    assert "shim gh was declared but not called" in (tmp_path / "s.md").read_text()
    document = json.loads(
        (repo / ".trialbook/runs/latest/evals/repo/literal/trial-1/result.json").read_text()
    )
    assert document["notes"] and "shim gh" in document["notes"][0]
    suite = json.loads((repo / ".trialbook/runs/latest/suite.json").read_text())
    assert suite["tests"][0]["properties"]["unused_shims"] == ["gh"]

    # Another commit, new results in .trialbook and a scratch folder: none of it reaches a trial.
    write(repo / "scratch/notes.txt", "mine\n")
    git(repo, "commit", "--allow-empty", "-qm", "another commit")
    second = invoke("eval", "evals", "--history-dir", str(history))
    assert second.exit_code == 0, second.output
    assert "cached (pass)" in second.output
    assert "trial 1" not in second.output

    write(repo / "README.md", "changed\n")
    third = invoke("eval", "evals", "--history-dir", str(history))
    assert "trial 1" in third.output  # a file that is copied still moves the key


def commit_all_local(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")


def test_changed_only_runs_ignore_excluded_and_trialbook_files_in_a_template(
    invoke: Invoke, tmp_path: Path
) -> None:
    from .gitrepo import commit_all, make_repo

    work, _ = make_repo(tmp_path / "remote")
    write(work / "evals/template/README.md", "starter\n")
    write(
        work / "evals/t.eval.yaml",
        """
        prompt_text: |
          ```bash
          test -f README.md
          ```
        agents: [literal]
        sandbox: {template: template, exclude: [build]}
        """,
    )
    base = commit_all(work, "base")
    # Files a run or a build leaves in the template folder, not committed: neither counts as a change.
    write(work / "evals/template/.trialbook/runs/x/suite.json", "{}\n")
    write(work / "evals/template/build/out.bin", "binary\n")
    os.chdir(work)
    plan = invoke("eval", "evals", "--changed", "--base", base, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert f"unchanged since {base}" in plan.output

    write(work / "evals/template/README.md", "changed\n")
    again = invoke("eval", "evals", "--changed", "--base", base, "--dry-run")
    assert "template evals/template changed (1 file(s), e.g. README.md)" in again.output


def test_changed_only_runs_follow_the_declared_instruction_files_and_skills(
    invoke: Invoke, tmp_path: Path
) -> None:
    # A pull request that edits only AGENTS.md, or one file of a skill, changes what the eval tests.
    from .gitrepo import commit_all, make_repo

    work, _ = make_repo(tmp_path / "remote")
    write(work / "AGENTS.md", "Always run make check.\n")
    write(work / "skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Deploys.\n---\nRun it.\n")
    write(work / "skills/deploy/scripts/run.sh", "echo deploy\n")
    write(
        work / "evals/t.eval.yaml",
        """
        prompt_text: hi
        agents: [literal]
        instructions: [../AGENTS.md]
        skills: [../skills/deploy]
        """,
    )
    base = commit_all(work, "base")
    os.chdir(work)
    plan = invoke("eval", "evals", "--changed", "--base", base, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert f"unchanged since {base}" in plan.output

    write(work / "AGENTS.md", "Always run make check first.\n")
    again = invoke("eval", "evals", "--changed", "--base", base, "--dry-run")
    assert "run       t [literal] — instruction file: AGENTS.md changed" in again.output

    commit_all(work, "edit AGENTS.md")
    write(work / "skills/deploy/scripts/run.sh", "echo deploy --prod\n")
    base = git_head(work)
    skill = invoke("eval", "evals", "--changed", "--base", base, "--dry-run")
    reason = "skill skills/deploy changed (1 file(s), e.g. scripts/run.sh)"
    assert f"run       t [literal] — {reason}" in skill.output


def git_head(work: Path) -> str:
    from .gitrepo import git

    return git(work, "rev-parse", "HEAD").strip()
