"""Selection cannot silently select nothing: --filter, --agent, list with history, dry-run refusals."""

from __future__ import annotations

from pathlib import Path

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]


def _evals(tmp_path: Path) -> None:
    for name in ("setup-neon", "setup-vercel", "deploy"):
        write(tmp_path / f"evals/{name}.eval.yaml", "prompt_text: hi\nagents: [literal]\n")
    write(
        tmp_path / "evals/scripted.eval.yaml",
        "prompt_text: hi\nagents: [literal, {name: fake, script: 'touch done'}]\n"
        "assert:\n  - file_exists: done\n",
    )


def _running(output: str) -> list[str]:
    return sorted(" ".join(line.split()[1:3]) for line in output.splitlines() if line.startswith("run "))


def test_a_filter_matching_nothing_exits_2_naming_the_closest_ids(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    for command in (("eval",), ("eval", "--dry-run"), ("list",)):
        result = invoke(*command, "--filter", "setup-neno")
        assert result.exit_code == 2, (command, result.output)
        assert "--filter 'setup-neno' matches no eval id; closest: setup-neon" in result.output
        assert "Traceback" not in result.output
    assert not (tmp_path / ".trialbook").exists()
    result = invoke("eval", "--filter", "nomatch")
    assert result.exit_code == 2
    # One matching filter does not excuse a typo in another.
    both = invoke("list", "--filter", "deploy", "--filter", "setup-typo")
    assert both.exit_code == 2 and "setup-typo" in both.output


def test_two_filters_select_the_union(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    result = invoke("list", "--filter", "setup-*", "--filter", "deploy")
    assert result.exit_code == 0, result.output
    assert _running(result.output) == ["deploy [literal]", "setup-neon [literal]", "setup-vercel [literal]"]
    assert "filtered  scripted [literal] — id matches none of setup-*, deploy" in result.output
    env = invoke("list", env={"TRIALBOOK_FILTER": "setup-neon deploy"})
    assert _running(env.output) == ["deploy [literal]", "setup-neon [literal]"]
    ran = invoke("eval", "--filter", "setup-*", "--filter", "deploy")
    assert ran.exit_code == 0
    assert sorted(p.name for p in (tmp_path / ".trialbook/runs/latest/evals").iterdir()) == [
        "deploy",
        "setup-neon",
        "setup-vercel",
    ]


def test_agent_selects_a_script_agent(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    listed = invoke("list", "--agent", "fake")
    assert listed.exit_code == 0, listed.output
    assert _running(listed.output) == ["scripted [fake]"]
    result = invoke("eval", "--agent", "fake")
    assert result.exit_code == 0, result.output
    assert [p.name for p in (tmp_path / ".trialbook/runs/latest/evals").iterdir()] == ["scripted"]
    assert [p.name for p in (tmp_path / ".trialbook/runs/latest/evals/scripted").iterdir()] == ["fake"]
    # A registered agent the eval does not list still runs everywhere; an unknown name is an error.
    assert len(_running(invoke("list", "--agent", "literal").output)) == 4
    unknown = invoke("eval", "--agent", "faek")
    assert unknown.exit_code == 2
    assert (
        "--agent 'faek' is neither a registered agent nor one an eval defines; closest: fake"
        in unknown.output
    )
    nothing = invoke("list", "--agent", "fake", "--filter", "deploy")
    assert nothing.exit_code == 2
    assert "no eval × agent pair matches both --filter deploy and --agent fake" in nothing.output


def test_list_shows_cached_from_history(invoke: Invoke, tmp_path: Path) -> None:
    _evals(tmp_path)
    assert invoke("eval", "--history-dir", "history", "--filter", "deploy").exit_code == 0
    result = invoke("list", "--history-dir", "history")
    assert result.exit_code == 0, result.output
    assert "cached    deploy [literal] — unchanged since the last run, which ended 'pass'" in result.output
    assert "run       setup-neon [literal]" in result.output
    forced = invoke("list", "--history-dir", "history", "--force")
    assert "run       deploy [literal] — cached (pass) but --force given" in forced.output
