"""Cache, history and changed-only runs end to end, against real git repositories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trialbook.agents.literal import LiteralAgent

from .conftest import Invoke, write
from .gitrepo import checked_out_state, commit_all, git, make_repo


def _evals(root: Path) -> None:
    for name, step in (("alpha", "tool alpha"), ("beta", "tool beta")):
        write(
            root / f"evals/prompts/{name}.md",
            f"""
            Run the {name} step:
            ```bash
            {step} > {name}.txt
            ```
            """,
        )
        write(
            root / f"evals/{name}.eval.yaml",
            f"""
            prompt: prompts/{name}.md
            agents: [literal]
            sandbox: {{template: template/}}
            shims:
              tool: {{script: 'echo "tool $1"'}}
            assert:
              - ran: tool {name}
              - file_exists: {name}.txt
            """,
        )
    write(root / "evals/template/README.md", "starter\n")


def _ran(output: str) -> list[str]:
    return sorted(line.split("]")[0].split("] ")[-1] for line in output.splitlines() if " trial 1: " in line)


def test_second_identical_run_is_cached_and_starts_no_agent(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    first = invoke("eval", "evals", "--history-dir", "history")
    assert first.exit_code == 0, first.output
    assert len((tmp_path / "history/alpha.jsonl").read_text().splitlines()) == 1

    second = invoke("eval", "evals", "--history-dir", "history")
    assert second.exit_code == 0, second.output
    assert "trial 1" not in second.output
    assert second.output.count("cached (pass)") == 2
    assert not (tmp_path / ".trialbook/runs/latest/evals").exists()
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    assert [t["outcome"] for t in suite["tests"]] == ["cached", "cached"]
    assert len((tmp_path / "history/alpha.jsonl").read_text().splitlines()) == 1

    forced = invoke("eval", "evals", "--history-dir", "history", "--force")
    assert forced.exit_code == 0, forced.output
    assert forced.output.count(" trial 1: pass") == 2
    assert len((tmp_path / "history/alpha.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize("change", ["template", "assertion", "agent-version", "prompt"])
def test_what_decides_the_outcome_invalidates_the_cache(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    _evals(tmp_path)
    assert invoke("eval", "evals", "--history-dir", "history").exit_code == 0
    if change == "template":
        (tmp_path / "evals/template/README.md").write_text("starter, edited\n")
        expected = 2
    elif change == "assertion":
        path = tmp_path / "evals/beta.eval.yaml"
        path.write_text(path.read_text().replace("file_exists: beta.txt", "file_exists: ./beta.txt"))
        expected = 0  # only an assertion changed: the kept run's trials are checked again instead
    elif change == "prompt":
        path = tmp_path / "evals/prompts/alpha.md"
        path.write_text(path.read_text().replace("Run the", "Now run the"))
        expected = 1
    else:
        # A new agent release: the adapter reports another version.
        monkeypatch.setattr(LiteralAgent, "version", lambda self: "99.0.0")
        expected = 2
    again = invoke("eval", "evals", "--history-dir", "history")
    assert again.exit_code == 0, again.output
    rescored = 1 if change == "assertion" else 0
    assert again.output.count(" trial 1: pass") == expected
    assert again.output.count("::literal: rescored from the recorded trials") == rescored
    assert again.output.count("cached (pass)") == 2 - expected - rescored


def test_error_and_incomplete_lines_never_serve_as_cache(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    assert invoke("eval", "evals", "--history-dir", "history").exit_code == 0
    path = tmp_path / "history/alpha.jsonl"
    line = json.loads(path.read_text())
    line["verdict"] = "error"
    path.write_text(json.dumps(line, sort_keys=True) + "\n")
    again = invoke("eval", "evals", "--history-dir", "history", "--dry-run")
    assert "run       alpha [literal] — the last run ended 'error', which is never reused" in again.output
    assert "cached    beta [literal]" in again.output


def test_a_settled_line_with_the_key_serves_though_a_newer_run_errored_or_used_another_key(
    invoke: Invoke, tmp_path: Path
) -> None:
    _evals(tmp_path)
    assert invoke("eval", "evals", "--history-dir", "history").exit_code == 0
    path = tmp_path / "history/alpha.jsonl"
    line = json.loads(path.read_text())
    errored = {**line, "verdict": "error", "run_id": "f" * 32, "started_at": "2099-01-01T00:00:00Z"}
    other_key = {
        **line,
        "cache_key": "sha256:" + "e" * 64,
        "run_id": "e" * 32,
        "started_at": "2099-01-02T00:00:00Z",
    }
    with path.open("a") as handle:
        for extra in (errored, other_key):
            handle.write(json.dumps(extra, sort_keys=True) + "\n")
    again = invoke("eval", "evals", "--history-dir", "history", "--dry-run")
    assert (
        f"cached    alpha [literal] — a run with the same cache key ({line['started_at']}) ended 'pass'"
        in (again.output)
    )


def test_pull_request_and_main_lines_with_other_keys_do_not_evict_one_another(
    invoke: Invoke, tmp_path: Path
) -> None:
    _evals(tmp_path)
    prompt = tmp_path / "evals/prompts/alpha.md"
    first, second = prompt.read_text(), prompt.read_text().replace("Run the", "Now run the")
    pr: dict[str, str | None] = {"GITHUB_REF": "refs/pull/7/merge", "GITHUB_EVENT_NAME": "pull_request"}
    main: dict[str, str | None] = {"GITHUB_REF": "refs/heads/main", "GITHUB_EVENT_NAME": "schedule"}

    def alpha(env: dict[str, str | None]) -> str:
        result = invoke("eval", "evals", "--filter", "alpha", "--history-dir", "history", env=env)
        assert result.exit_code == 0, result.output
        return result.output

    assert " trial 1: pass" in alpha(pr)  # the PR records the first prompt's key
    prompt.write_text(second)
    assert " trial 1: pass" in alpha(main)  # main records another key, newer
    prompt.write_text(first)
    assert "cached (pass)" in alpha(main)  # the PR's line still serves: same content
    prompt.write_text(second)
    assert "cached (pass)" in alpha(pr)  # and main's line serves the PR
    refs = [
        json.loads(text)["extra"]["ref"]
        for text in (tmp_path / "history/alpha.jsonl").read_text().splitlines()
    ]
    assert refs == ["refs/pull/7/merge", "refs/heads/main"]


def test_history_branch_leaves_the_checkout_untouched_and_is_readable_with_git(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, origin = make_repo(tmp_path)
    _evals(work)
    commit_all(work, "evals")
    (work / "evals/prompts/alpha.md").write_text((work / "evals/prompts/alpha.md").read_text() + "\n")
    write(work / "notes.txt", "staged\n")
    git(work, "add", "notes.txt")
    before = checked_out_state(work)
    monkeypatch.chdir(work)

    result = invoke("eval", "evals", "--history-branch", "trialbook-results", "--push")
    assert result.exit_code == 0, result.output
    assert checked_out_state(work)[:4] == before[:4]
    assert [f for f in checked_out_state(work)[4] if not f.startswith(".trialbook")] == before[4]

    roots = git(origin, "rev-list", "--max-parents=0", "trialbook-results").split()
    assert len(roots) == 1
    assert git(origin, "ls-tree", "-r", "--name-only", "trialbook-results").split() == [
        "history/alpha.jsonl",
        "history/beta.jsonl",
    ]
    line = json.loads(git(origin, "show", "trialbook-results:history/alpha.jsonl"))
    assert (line["id"], line["agent"], line["verdict"], line["passed"], line["trials"]) == (
        "alpha",
        "literal",
        "pass",
        1,
        1,
    )
    assert line["commit"] == before[0].strip()
    assert line["cache_key"].startswith("sha256:")

    cached = invoke("eval", "evals", "--history-branch", "trialbook-results", "--push")
    assert cached.exit_code == 0, cached.output
    assert cached.output.count("cached (pass)") == 2
    assert len(git(origin, "show", "trialbook-results:history/alpha.jsonl").splitlines()) == 1


def test_changed_runs_exactly_the_evals_that_differ_from_the_base(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, _ = make_repo(tmp_path)
    _evals(work)
    base = commit_all(work, "base")
    path = work / "evals/prompts/beta.md"
    path.write_text(path.read_text().replace("Run the", "Please run the"))
    write(
        work / "evals/gamma.eval.yaml",
        """
        prompt_text: |
          ```bash
          touch gamma.txt
          ```
        agents: [literal]
        assert:
          - file_exists: gamma.txt
        """,
    )
    commit_all(work, "change beta, add gamma")
    monkeypatch.chdir(work)

    plan = invoke("eval", "evals", "--changed", "--base", base, "--dry-run")
    assert plan.exit_code == 0, plan.output
    assert f"unchanged alpha [literal] — unchanged since {base}" in plan.output
    assert "run       beta [literal] — prompt: evals/prompts/beta.md changed" in plan.output
    assert "run       gamma [literal] — evals/gamma.eval.yaml is new since" in plan.output

    result = invoke("eval", "evals", "--changed", "--base", "origin/main~1")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (work / ".trialbook/runs/latest/evals").iterdir()) == ["beta", "gamma"]


def test_a_base_that_does_not_resolve_names_the_fetch_depth(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, _ = make_repo(tmp_path)
    _evals(work)
    commit_all(work, "base")
    monkeypatch.chdir(work)
    result = invoke("eval", "evals", "--changed", "--base", "origin/release")
    assert result.exit_code == 2
    assert "fetch-depth: 0" in result.output
    assert "Traceback" not in result.output
