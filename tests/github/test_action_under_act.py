"""The real composite action and the example workflow, run by ``act`` in host mode against local parts.

Each test copies this checkout into a fresh repository with a bare ``origin``, adds an eval whose literal
agent scans the environment of every process it can read for the GitHub token, and runs one job of
``.github/workflows/evals.yml``. The GitHub API is a loopback fake; the third-party actions are the
stand-ins in ``act/``; history lands on the bare origin and is read back with plain git. The run jobs
share one venv cache across the session (publish jobs always install fresh, as the action says).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.system import ensure
from trialbook.report.markdown import STICKY_MARKER

from ..history.conftest import git_daemon, home
from ..runner.gitrepo import git
from ._actions import DATA
from ._fake_api import FakeGitHub, serve
from .act_run import ActRun, make_project, run_act
from .test_action_docs import documented_workflows

SCAN_TEMPLATE = """
Look for the workflow's token in every process this agent can see.

```bash
found=0
for environ in /proc/[0-9]*/environ; do
  if tr '\\0' '\\n' < "$environ" 2>/dev/null | grep -q -e '@TOKEN@'; then
    echo "a GitHub token is readable in $environ: $(tr '\\0' ' ' < "${environ%/environ}/cmdline")"
    tr '\\0' '\\n' < "$environ" | grep -e TOKEN -e '^GITHUB_' | cut -c1-60
    found=1
  fi
done
test "$found" = 0 && echo "no token in $(ls -d /proc/[0-9]* | wc -l) processes" > scan.txt
```
"""


TRIALBOOK = Path(sys.executable).with_name("trialbook")
_ = (git_daemon, home)  # fixtures shared with the history tests


def _token() -> str:
    # One per test: tests running side by side must not find each other's (legitimately held) tokens.
    return "ghs_actsentinel" + secrets.token_hex(13)


def _scan(token: str) -> str:
    return SCAN_TEMPLATE.replace("@TOKEN@", token[:28])


SCAN_EVAL = """
prompt: scan.md
agents: [literal]
assert:
  - file_exists: scan.txt
"""


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with serve(FakeGitHub()) as fake:
        yield fake


def _base_project(tmp_path: Path) -> tuple[Path, Path]:
    return make_project(tmp_path / "repo")


def _add_scan(work: Path, token: str) -> None:
    (work / "examples/evals/scan.md").write_text(_scan(token))
    (work / "examples/evals/scan.eval.yaml").write_text(SCAN_EVAL)


@pytest.fixture
def token() -> str:
    return _token()


@pytest.fixture(scope="session")
def venv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ``actions/cache`` folder shared by this session's act runs, on every xdist worker.

    The action caches only the venv of its pinned dependencies, saved right after a fresh install and
    before any agent runs; the save stand-in writes an entry whole or not at all. So the first run job
    installs fresh and every later one restores that venv, which is all the install is to the tests
    given this folder. The test that checks how jobs install keeps a cold cache of its own.
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "act-venv-cache"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def project(tmp_path: Path, token: str) -> tuple[Path, Path]:
    """The examples and the token scan, all on main."""
    work, origin = _base_project(tmp_path)
    _add_scan(work, token)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "add the token scan")
    git(work, "push", "-q", "origin", "main")
    git(work, "fetch", "-q", "origin")
    return work, origin


def _act(
    tmp_path: Path,
    work: Path,
    github: FakeGitHub,
    token: str,
    event: str,
    payload: dict[str, object],
    job: str,
    cache: Path | None,
) -> ActRun:
    return run_act(
        work,
        tmp_path,
        event=event,
        payload=payload,
        job=job,
        env={"GITHUB_API_URL": github.url},
        secrets={"GITHUB_TOKEN": token},
        cache=cache,
    )


_INSTALLED = re.compile(
    r"^\[[^/\]]+/([\w-]+) *\]\s+\|\s+(?:\x1b\[0m)?trialbook installed in [\d.]+ s \(([^)]+)\)", re.M
)


def _installs(log: str) -> dict[str, list[str]]:
    """How the run's jobs installed trialbook ("run" for the agent jobs), from the install step's own line."""
    found: dict[str, list[str]] = {}
    for job, how in _INSTALLED.findall(log):
        found.setdefault("publish" if job == "publish" else "run", []).append(how)
    return found


def _no_token_under(folder: Path, token: str) -> None:
    for path in folder.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), f"the token is in {path}"


def _history(origin: Path, eval_id: str) -> list[dict[str, Any]]:
    text = git(origin, "show", f"trialbook-results:history/{eval_id}.jsonl")
    return [json.loads(line) for line in text.splitlines()]


def _artifact(run: ActRun) -> Path:
    """The uploaded results folder (the artifact also holds report.html beside it)."""
    (artifact,) = [p for p in run.artifacts.iterdir() if p.is_dir()]
    assert (artifact / "report.html").is_file()
    return artifact / "results"


def test_the_scan_finds_a_token_when_one_is_there(tmp_path: Path, token: str) -> None:
    """The check the act tests rely on is not vacuous: a process holding the token is found."""
    script = _scan(token).split("```bash\n")[1].split("```")[0]
    holder = subprocess.Popen(["sleep", "30"], env={"GH_TOKEN": token, "PATH": "/usr/bin:/bin"})
    try:
        done = subprocess.run(
            ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
        )
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode != 0
    assert f"/proc/{holder.pid}/environ" in done.stdout
    assert not (tmp_path / "scan.txt").exists()


@pytest.mark.act
def test_nightly_job_runs_every_eval_records_history_and_agents_never_see_the_token(
    tmp_path: Path, project: tuple[Path, Path], github: FakeGitHub, token: str, venv_cache: Path
) -> None:
    ensure("bubblewrap")  # the action's isolation is auto: here it isolates
    work, origin = project
    run = _act(tmp_path, work, github, token, "schedule", {"schedule": "17 3 * * *"}, "publish", venv_cache)
    assert run.returncode == 0, run.log[-6000:]
    outputs = run.outputs()
    assert (outputs["passed"], outputs["failed"], outputs["cached"]) == ("4", "0", "0"), outputs
    assert outputs["summary"].startswith("## trialbook evals")
    assert "**4 passed**" in outputs["summary"]
    artifact = _artifact(run)
    suite = json.loads((artifact / "suite.json").read_text())
    assert len(suite["tests"]) == 4
    assert {test["properties"]["sandbox"]["isolation"] for test in suite["tests"]} == {"bwrap"}
    state = json.loads((artifact / "ci.json").read_text())
    assert state["exit_code"] == 0 and len(state["history_lines"]) == 4
    assert (artifact / "evals/scan/literal/trial-1/result.json").is_file()
    _no_token_under(artifact, token)
    assert token not in run.log
    for eval_id in ("scan", "deploy", "quick-init", "config-check"):
        (line,) = _history(origin, eval_id)
        assert line["verdict"] == "pass"
    assert github.requests == []


@pytest.mark.act
def test_labelled_pr_with_a_job_level_gh_token_comments_once_and_agents_never_see_it(
    tmp_path: Path, github: FakeGitHub, token: str, venv_cache: Path
) -> None:
    work, origin = _base_project(tmp_path)
    # A common pattern that hands every step the workflow's write token.
    workflow = work / ".github/workflows/evals.yml"
    text = workflow.read_text()
    marker = "    timeout-minutes: 90\n    concurrency:\n      # A new push"
    assert marker in text
    workflow.write_text(text.replace(marker, "    env:\n      GH_TOKEN: ${{ github.token }}\n" + marker, 1))
    git(work, "commit", "-q", "-am", "job-level GH_TOKEN")
    git(work, "push", "-q", "origin", "main")
    git(work, "fetch", "-q", "origin")
    base = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "-b", "guide-update")
    _add_scan(work, token)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "add the token scan")
    head = git(work, "rev-parse", "HEAD").strip()
    payload = json.loads((DATA / "pull_request_labeled.json").read_text())
    payload["pull_request"]["base"]["sha"] = base
    payload["pull_request"]["head"]["sha"] = head

    run = _act(tmp_path, work, github, token, "pull_request", payload, "publish", venv_cache)
    assert run.returncode == 0, run.log[-6000:]
    outputs = run.outputs()
    assert (outputs["passed"], outputs["failed"]) == ("1", "0"), outputs
    artifact = _artifact(run)
    _no_token_under(artifact.parent, token)
    state = json.loads((artifact / "ci.json").read_text())
    assert [row["eval_id"] for row in state["review"]["rows"]] == ["scan"]
    (line,) = _history(origin, "scan")
    assert line["extra"]["ref"].startswith("refs/pull/42/")
    posts = [r for r in github.requests if r.method == "POST"]
    assert len(posts) == 1 and "scan" in posts[0].body["body"]
    assert posts[0].headers.get("authorization", "").endswith(token)


@pytest.mark.act
def test_a_fork_pr_is_published_by_the_workflow_run_example_with_one_comment_and_no_history(
    tmp_path: Path, github: FakeGitHub, token: str, venv_cache: Path
) -> None:
    """The fork's run (read-only token) cannot comment; evals-publish.yml does, from its artifact."""
    work, origin = _base_project(tmp_path)
    base = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "-b", "guide-update")
    _add_scan(work, token)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "add the token scan")
    head = git(work, "rev-parse", "HEAD").strip()
    payload = json.loads((DATA / "pull_request_fork.json").read_text())
    payload["pull_request"]["base"]["sha"] = base
    payload["pull_request"]["head"]["sha"] = head

    # The workflow's own publish job is skipped for a fork (its token could not write anyway).
    pr_run = _act(tmp_path, work, github, token, "pull_request", payload, "publish", venv_cache)
    assert pr_run.returncode == 0, pr_run.log[-6000:]
    assert "trialbook publish" not in pr_run.log or "Skipping job 'publish'" in pr_run.log
    assert github.requests == []
    (name,) = [p.name for p in pr_run.artifacts.iterdir() if p.is_dir()]
    assert (pr_run.artifacts / f"{name}.retention-days").read_text() == "14"
    _no_token_under(pr_run.artifacts, token)

    github.pulls = [
        {
            "number": payload["number"],
            "state": "open",
            "labels": [{"name": "run-evals"}],
            "head": {"ref": "guide-update", "sha": head, "repo": payload["pull_request"]["head"]["repo"]},
        }
    ]
    run_payload = json.loads((DATA / "workflow_run_fork.json").read_text())
    run_payload["workflow_run"]["head_sha"] = head
    git(work, "checkout", "-q", "main")  # workflow_run runs the default branch's files, never the PR's
    published = run_act(
        work,
        tmp_path,
        event="workflow_run",
        payload=run_payload,
        job="publish",
        env={"GITHUB_API_URL": github.url},
        secrets={"GITHUB_TOKEN": token},
        workflow=".github/workflows/evals-publish.yml",
    )
    assert published.returncode == 0, published.log[-6000:]
    posts = [r for r in github.requests if r.method == "POST"]
    assert len(posts) == 1, published.log[-4000:]
    assert posts[0].path == f"/repos/acme/prompts/issues/{payload['number']}/comments"
    assert "scan" in posts[0].body["body"]
    assert posts[0].headers.get("authorization", "").endswith(token)
    assert published.outputs()["passed"] == "1"
    # A fork's artifact never becomes history: a forged line could pass for a real result.
    assert "trialbook-results" not in git(origin, "branch", "--list")


BROKEN_EVAL = """
prompt: broken.md
agents: [literal]
assert:
  - file_exists: elsewhere.txt
"""


@pytest.mark.act
def test_a_cached_failure_fails_the_pr_job_a_foreign_comment_stays_and_the_nightly_reuses_pr_lines(
    tmp_path: Path, github: FakeGitHub, token: str
) -> None:
    """Three scenarios in two act runs, one history: each run's starting state is the previous one's end."""
    work, origin = _base_project(tmp_path)
    base = git(work, "rev-parse", "HEAD").strip()
    git(work, "checkout", "-q", "-b", "guide-update")
    _add_scan(work, token)
    (work / "examples/evals/broken.md").write_text("```bash\ntouch made.txt\n```\n")
    (work / "examples/evals/broken.eval.yaml").write_text(BROKEN_EVAL)
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "add the token scan and a broken eval")
    head = git(work, "rev-parse", "HEAD").strip()
    # An earlier run recorded broken's failure (here a plain local run, pushed to the shared history).
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "TRIALBOOK_"))}
    seeded = subprocess.run(
        [str(TRIALBOOK), "eval", "examples/evals", "--filter", "broken",
         "--history-branch", "trialbook-results", "--push"],
        cwd=work, env={**environ, "CI": "true"}, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert seeded.returncode == 1, seeded.stdout + seeded.stderr
    assert len(_history(origin, "broken")) == 1
    planted = f"{STICKY_MARKER}\nEverything passed, merge away."
    foreign = github.add_comment(42, planted, user="mallory")
    payload = json.loads((DATA / "pull_request_labeled.json").read_text())
    payload["pull_request"]["base"]["sha"] = base
    payload["pull_request"]["head"]["sha"] = head

    # Its own cache, cold: the PR run installs fresh and saves, the nightly restores.
    pr = _act(tmp_path, work, github, token, "pull_request", payload, "publish", None)
    assert pr.returncode != 0, pr.log[-6000:]  # a cached failure is a failure
    outputs = pr.outputs()
    assert (outputs["passed"], outputs["failed"], outputs["cached"]) == ("1", "1", "1"), outputs
    assert "**1 passed · 1 failed (1 cached) · 3 skipped**" in outputs["summary"]
    assert (
        "::error file=examples/evals/broken.eval.yaml,title=broken × literal%3A fail::0/1 trials passed "
        "(fail, cached: recorded "
    ) in pr.log
    assert len(_history(origin, "broken")) == 1  # not re-run
    (scan,) = _history(origin, "scan")
    assert scan["extra"]["ref"].startswith("refs/pull/42/")
    assert foreign["body"] == planted  # the marker alone does not make a comment trialbook's
    (ours,) = [c for c in github.comments[42] if c is not foreign]
    assert ours["user"]["login"] == "github-actions[bot]"
    body = ours["body"]
    assert f"<!-- trialbook:head={head} -->" in body and f"Results for commit {head[:7]}" in body
    assert "### What failed" in body and "elsewhere.txt" in body.split("### What failed")[1]
    _no_token_under(_artifact(pr).parent, token)

    # The PR merges unchanged; the nightly finds every line it needs for the PR's two evals.
    git(work, "checkout", "-q", "main")
    git(work, "merge", "-q", "--ff-only", "guide-update")
    git(work, "push", "-q", "origin", "main")
    # The runner's checkout (fetch-depth: 0) fetches every branch of origin, the history branch included.
    git(work, "fetch", "-q", "origin")
    # Another workflow run: its publish job downloads its own run's artifacts, not the PR run's (the
    # stand-in download reads every artifact act keeps, so the PR run's are cleared first).
    shutil.rmtree(pr.artifacts)
    nightly = _act(tmp_path, work, github, token, "schedule", {"schedule": "17 3 * * *"}, "publish", None)
    assert nightly.returncode != 0, nightly.log[-6000:]  # broken is still known to fail
    outputs = nightly.outputs()
    assert (outputs["passed"], outputs["failed"], outputs["cached"]) == ("4", "1", "2"), nightly.log[-6000:]
    assert [line["extra"]["ref"] for line in _history(origin, "scan")] == [scan["extra"]["ref"]]
    assert len(_history(origin, "broken")) == 1
    # The PR run's agent job saved the venv it installed; the nightly's agent job restores it, and the
    # publish jobs of both install fresh, never from a cache an agent's job could have written.
    assert _installs(pr.log) == {"run": ["fresh"], "publish": ["fresh"]}, pr.log[-6000:]
    assert _installs(nightly.log) == {"run": ["from the cached venv"], "publish": ["fresh"]}
    for eval_id in ("deploy", "quick-init", "config-check"):
        (line,) = _history(origin, eval_id)
        assert line["extra"]["ref"] == "refs/heads/main"


@pytest.mark.act
def test_the_docs_complete_workflow_runs_three_shards_and_publishes_them_with_one_push(
    tmp_path: Path, project: tuple[Path, Path], github: FakeGitHub, token: str, venv_cache: Path
) -> None:
    """The nightly part of docs/github-action.md's workflow, as written there, but for two lines."""
    work, origin = project
    text = documented_workflows()["evals.yml"]
    # The agent CLIs are this machine's already (the install input has tests of its own); the evals
    # are the examples'. The shards' artifacts are named as on GitHub, from the shard input.
    text, installs = re.subn(r'AGENT_CLIS: ".*"', 'AGENT_CLIS: ""', text)
    text, evals = re.subn(
        r"(\n( +)install: \$\{\{ env.AGENT_CLIS \}\}\n)", r"\1\2evals: examples/evals\n", text
    )
    # On GitHub each shard has a runner of its own; here they share one machine, where a shard's agent
    # would rightly find the token a neighbouring shard's fetch step holds. So one at a time.
    text, serial = re.subn(r"(\n( +)fail-fast: false\n)", r"\1\2max-parallel: 1\n", text)
    # The publish job checks the artifacts against the same eval files.
    text, checked = re.subn(r"(\n( +)mode: publish\n)", r"\1\2evals: examples/evals\n", text)
    assert (installs, evals, serial, checked) == (1, 2, 1, 1)
    (work / ".github/workflows/evals.yml").write_text(text)
    git(work, "commit", "-q", "-am", "the documented workflow")
    git(work, "push", "-q", "origin", "main")

    run = run_act(
        work,
        tmp_path,
        event="schedule",
        payload={"schedule": "17 3 * * *"},
        job="publish",
        env={"GITHUB_API_URL": github.url},
        secrets={"GITHUB_TOKEN": token},
        extra=("--concurrent-jobs", "1"),
        cache=venv_cache,
    )
    assert run.returncode == 0, run.log[-8000:]
    shards = sorted(p for p in run.artifacts.iterdir() if p.is_dir())
    assert [p.name for p in shards] == [f"trialbook-results-shards-shard-{i}-of-3-1" for i in (1, 2, 3)]
    ran: list[str] = []
    for index, artifact in enumerate(shards, start=1):
        state = json.loads((artifact / "results/ci.json").read_text())
        assert state["shard"] == f"{index}/3" and state["exit_code"] == 0
        ran += [row["eval_id"] for row in state["review"]["rows"]]
        _no_token_under(artifact, token)
    assert sorted(ran) == ["config-check", "deploy", "quick-init", "scan"]  # each in exactly one shard
    # One publish job: every shard's lines in one commit on the history branch, one summary.
    assert git(origin, "rev-list", "--count", "trialbook-results").strip() == "1"
    for eval_id in ran:
        (line,) = _history(origin, eval_id)
        assert line["verdict"] == "pass"
    outputs = run.outputs()
    assert (outputs["passed"], outputs["failed"]) == ("4", "0"), outputs
    assert "**4 passed**" in outputs["summary"] and "another shard" not in outputs["summary"]
    assert token not in run.log
    assert github.requests == []


@pytest.fixture
def daemon_root(tmp_path: Path) -> Path:
    """The git daemon serves the project's own bare origin."""
    root = tmp_path / "repo"
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.mark.act
def test_a_history_push_the_remote_refuses_is_a_warning_and_the_passing_nightly_stays_green(
    tmp_path: Path,
    project: tuple[Path, Path],
    github: FakeGitHub,
    token: str,
    git_daemon: str,
    venv_cache: Path,
) -> None:
    work, origin = project
    # Over git://, so the remote runs its hooks (a push to a local path does not).
    git(work, "remote", "set-url", "origin", f"{git_daemon}origin.git")
    hook = origin / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\necho 'history is frozen this week' >&2\nexit 1\n")
    hook.chmod(0o755)
    run = _act(tmp_path, work, github, token, "schedule", {"schedule": "17 3 * * *"}, "publish", venv_cache)
    assert run.returncode == 0, run.log[-6000:]  # the evals passed; publishing is not what failed
    outputs = run.outputs()
    assert (outputs["passed"], outputs["failed"]) == ("4", "0"), outputs
    assert "History was not recorded" in outputs["summary"] and "**4 passed**" in outputs["summary"]
    assert "history is frozen this week" in run.log
    assert "trialbook-results" not in git(origin, "branch", "--list")
    # The lines stay in the uploaded results, for a later `trialbook publish` to land.
    kept = json.loads((_artifact(run) / "ci.json").read_text())["history_lines"]
    assert sorted(line["id"] for line in kept) == ["config-check", "deploy", "quick-init", "scan"]
