"""Trigger evals with the real Codex CLI against a loopback model that uses the skill for some queries.

The model's script decides per query (a marker in the request picks the script), so the expected
confusion table is known exactly; trialbook has to read it back from Codex's own evidence.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell, use_tool

from ..runner.conftest import Invoke, invoke

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

KEY = "sk-fake-codex-" + "7e" * 20
READ_SKILL = [shell("cat .agents/skills/deploy/SKILL.md"), say("Deployed.")]
QUERIES = {
    # query: (label, the model reads the skill)
    "Deploy the starter app to staging": ("should", True),
    "Put this build on production": ("should", False),
    "Explain how our deploy script works": ("should_not", True),
    "Run the unit tests": ("should_not", False),
}


def _write(tmp_path: Path, codex: Path, url: str, min_recall: float) -> None:
    skill = tmp_path / "skills/deploy/SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text("---\nname: deploy\ndescription: Deploys the app with acme.\n---\nRun acme deploy.\n")
    queries = "\n".join(
        f"    - {{query: {json.dumps(text)}, expect: {label}}}" for text, (label, _) in QUERIES.items()
    )
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals/deploy.eval.yaml").write_text(
        textwrap.dedent(
            f"""\
            secrets: [FAKE_CODEX_KEY]
            skills: [../skills/deploy]
            agents:
              - name: codex
                binary: {codex}
                model: gpt-5.5
                base_url: {url}
                env: {{CODEX_API_KEY: "{{{{ secrets.FAKE_CODEX_KEY }}}}"}}
            timeout: 60s
            triggers:
              skill: deploy
              min_recall: {min_recall}
              queries:
            """
        )
        + queries
        + "\n"
    )


def _group(tmp_path: Path) -> Any:
    """The one trigger group of the latest run's manifest."""
    [group] = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())["triggers"]
    return group


def test_codex_gives_the_scripted_confusion_table_from_its_own_tool_calls(
    invoke: Invoke, tmp_path: Path
) -> None:
    codex = ensure_cli("@openai/codex")
    when = {text: READ_SKILL for text, (_, reads) in QUERIES.items() if reads}
    with ModelServer([say("Done.")], when=when) as server:
        _write(tmp_path, codex, server.openai_url, min_recall=0.5)
        result = invoke("eval", "evals", env={"FAKE_CODEX_KEY": KEY})
    assert "recall 0.50 (1/2) · precision 0.50 (1/2)" in result.output, result.output
    assert result.exit_code == 0, result.output  # recall 0.5 meets min_recall 0.5; a query's miss is data
    group = _group(tmp_path)
    assert group["verdict"] == "pass"
    assert group["score"]["confusion"] == {"tp": 1, "fn": 1, "fp": 1, "tn": 1}
    # The evidence names the call it came from: Codex read SKILL.md with a shell command.
    results = sorted((tmp_path / ".trialbook/runs/latest").glob("evals/deploy/*/codex/trial-1/result.json"))
    assert len(results) == 4
    actual = sorted(json.loads(path.read_text())["assertions"][0]["actual"] for path in results)
    used = [text for text in actual if text.startswith("tool call ")]
    assert len(used) == 2 and all("used deploy" in text for text in used), actual


def test_a_model_that_never_uses_the_skill_has_recall_0_and_fails_min_recall(
    invoke: Invoke, tmp_path: Path
) -> None:
    codex = ensure_cli("@openai/codex")
    with ModelServer([say("Done.")]) as server:
        _write(tmp_path, codex, server.openai_url, min_recall=0.5)
        result = invoke("eval", "evals", env={"FAKE_CODEX_KEY": KEY})
    assert result.exit_code == 1, result.output
    assert "recall 0.00 (0/2)" in result.output
    assert "recall 0.00 (0/2) < min_recall 0.5" in result.output
    group = _group(tmp_path)
    assert (group["verdict"], group["score"]["confusion"]) == ("fail", {"tp": 0, "fn": 2, "fp": 0, "tn": 2})


def _edit_description(tmp_path: Path, description: str) -> None:
    skill = tmp_path / "skills/deploy/SKILL.md"
    skill.write_text(f"---\nname: deploy\ndescription: {description}\n---\nRun acme deploy.\n")


def test_a_description_edit_that_loses_the_skill_is_a_significant_recall_drop_against_the_base(
    invoke: Invoke, tmp_path: Path
) -> None:
    # The loopback model reads the skill whenever its description carries the marker: an edit that drops
    # the marker is an edit after which the agent no longer picks the skill up.
    codex = ensure_cli("@openai/codex")
    marker = "ships-marker-41d7"
    with ModelServer([say("Done.")], when={marker: READ_SKILL}) as server:
        _write(tmp_path, codex, server.openai_url, min_recall=0.0)
        eval_file = tmp_path / "evals/deploy.eval.yaml"
        eval_file.write_text(eval_file.read_text().replace("timeout: 60s\n", "timeout: 60s\ntrials: 3\n"))
        env = {"FAKE_CODEX_KEY": KEY}
        _edit_description(tmp_path, f"Deploys and {marker} the app with acme.")
        base = invoke("eval", "evals", "--history-dir", "history", env=env)
        assert "recall 1.00 (6/6)" in base.output, base.output
        _edit_description(tmp_path, f"Deploys, tests and {marker} the app with acme.")
        same = invoke("eval", "evals", "--history-dir", "history", env=env)
        assert "vs base: no change" in same.output, same.output
        _edit_description(tmp_path, "Deploys the app with acme.")
        edited = invoke("eval", "evals", "--history-dir", "history", env=env)
    assert "recall 1.00 (6/6) → 0.00 (0/6), p = 0.00216 (significant)" in edited.output, edited.output
    assert "precision 0.50 (6/12) → n/a (0/0);" in edited.output  # no test without trials on both sides
    assert "2 queries lost" in edited.output
    base_record = _group(tmp_path)["base"]
    assert base_record["recall_p"] < 0.05
    assert sorted(flip["expect"] for flip in base_record["flipped"]) == [
        "should",
        "should",
        "should_not",
        "should_not",
    ]


def test_claude_code_skill_tool_calls_give_the_scripted_confusion_table(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = ensure_cli("@anthropic-ai/claude-code")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    uses = [use_tool("Skill", skill="deploy"), say("Deployed.")]
    when = {text: uses for text, (_, reads) in QUERIES.items() if reads}
    with ModelServer([say("Done.")], when=when) as server:
        _write(tmp_path, codex=Path("unused"), url="unused", min_recall=0.5)
        eval_file = tmp_path / "evals/deploy.eval.yaml"
        _, _, tail = eval_file.read_text().partition("timeout: 60s\n")
        agent = (
            "secrets: [FAKE_ANTHROPIC_KEY]\nskills: [../skills/deploy]\nagents:\n  - name: claude-code\n"
            f"    binary: {claude}\n    model: sonnet\n    env:\n"
            '      ANTHROPIC_API_KEY: "{{ secrets.FAKE_ANTHROPIC_KEY }}"\n'
            f"      ANTHROPIC_BASE_URL: {server.url}\n"
        )
        eval_file.write_text(agent + "timeout: 60s\n" + tail)
        result = invoke("eval", "evals", env={"FAKE_ANTHROPIC_KEY": "sk-ant-fake-" + "c1" * 20})
    assert "recall 0.50 (1/2) · precision 0.50 (1/2)" in result.output, result.output
    group = _group(tmp_path)
    assert group["score"]["confusion"] == {"tp": 1, "fn": 1, "fp": 1, "tn": 1}
    results = (tmp_path / ".trialbook/runs/latest").glob("evals/deploy/*/claude-code/trial-1/result.json")
    actual = sorted(json.loads(path.read_text())["assertions"][0]["actual"] for path in results)
    assert sum(text.startswith("tool call Skill ") for text in actual) == 2, actual
