"""Declared instruction files and skills reach the real Claude Code and Codex as each loads them natively.

The fake model's request log is the proof: a file's marker in a request means its text reached the model.
Through the auditing proxy (``audit_requests: true``) the evidence says which reached the model; without
it, every declared input is ``loaded: null``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say
from trialbook.evidence import load_suite

from ..runner.conftest import Invoke, invoke
from ._instructions_eval import loaded_rows, markers_in, write_eval, write_repo

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

ANTHROPIC_KEY = "sk-ant-fake-" + "b8" * 20
CODEX_KEY = "sk-fake-codex-" + "d4" * 20
PLACED = {
    "AGENTS.md",
    "CLAUDE.md",
    ".github/copilot-instructions.md",
    "docs/copilot-instructions.md",
    "docs/AGENTS.md",
    "docs/CLAUDE.md",
}


def test_claude_code_gets_claude_md_and_codex_gets_agents_md_under_their_isolation(
    invoke: Invoke, tmp_path: Path, no_model_credentials: None
) -> None:
    claude, codex = ensure_cli("@anthropic-ai/claude-code"), ensure_cli("@openai/codex")
    write_repo(tmp_path)
    with ModelServer([say("Hello.")]) as server:
        for name, audit in (("audited", "true"), ("unaudited", "false")):
            write_eval(
                tmp_path,
                name,
                secrets=["FAKE_ANTHROPIC_KEY", "FAKE_CODEX_KEY"],
                agents=f"""
                - name: claude-code
                  binary: {claude}
                  model: sonnet
                  audit_requests: {audit}
                  env:
                    ANTHROPIC_API_KEY: "{{{{ secrets.FAKE_ANTHROPIC_KEY }}}}"
                    ANTHROPIC_BASE_URL: {server.url}
                - name: codex
                  binary: {codex}
                  model: gpt-5.5
                  audit_requests: {audit}
                  base_url: {server.openai_url}
                  env:
                    CODEX_API_KEY: "{{{{ secrets.FAKE_CODEX_KEY }}}}"
                """,
            )
        result = invoke(
            "eval", "evals", env={"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY, "FAKE_CODEX_KEY": CODEX_KEY}
        )
        requests = server.model_requests()
    assert result.exit_code == 0, result.output
    by_agent = {
        "claude-code": [r for r in requests if r.path.startswith("/v1/messages")],
        "codex": [r for r in requests if r.path.startswith("/v1/responses")],
    }
    assert all(by_agent.values()), [r.path for r in requests]
    # Claude Code reads the project's CLAUDE.md (never AGENTS.md) as a user's session would; Codex reads
    # AGENTS.md from its working folder (never CLAUDE.md) and lists the skill placed in .agents/skills.
    assert all(markers_in(r.body) & PLACED == {"CLAUDE.md"} for r in by_agent["claude-code"])
    assert markers_in(by_agent["codex"][0].body) == {"AGENTS.md", "skill"}
    assert all(markers_in(r.body) & PLACED == {"AGENTS.md"} for r in by_agent["codex"])
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert {test.id: test.outcome for test in suite.tests} == {
        "audited::claude-code": "passed",
        "audited::codex": "passed",
        "unaudited::claude-code": "passed",
        "unaudited::codex": "passed",
    }
    runs = tmp_path / ".trialbook/runs/latest/evals"
    # Through the auditing proxy, the evidence says what the fake's log shows.
    assert loaded_rows(runs / "audited/claude-code/trial-1/result.json") == {
        **dict.fromkeys(PLACED, False),
        "CLAUDE.md": True,
        # Discovered and offered to the model with the Skill tool, as in a user's session.
        ".claude/skills/deploy-notes": True,
    }
    assert loaded_rows(runs / "audited/codex/trial-1/result.json") == {
        **dict.fromkeys(PLACED, False),
        "AGENTS.md": True,
        ".agents/skills/deploy-notes": True,
    }
    skills_folder = {"claude-code": ".claude/skills", "codex": ".agents/skills"}
    for agent, folder in skills_folder.items():
        rows = loaded_rows(runs / f"unaudited/{agent}/trial-1/result.json")
        # No request audit ran: nobody knows, so every row says null.
        assert rows == {**dict.fromkeys(PLACED), f"{folder}/deploy-notes": None}


def test_a_slash_prompt_runs_a_claude_code_skill_and_loaded_says_so(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A prompt of /NAME runs a skill without the model choosing it: its body reaches the model as part of
    # the user's turn. That is no tool call, so skill_used does not count it (docs/assertions.md), and
    # loaded, decided from the audited requests, is the check that shows it.
    claude = ensure_cli("@anthropic-ai/claude-code")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    write_repo(tmp_path)
    with ModelServer([say("Hello.")]) as server:
        path = write_eval(
            tmp_path,
            "slash",
            secrets=["FAKE_ANTHROPIC_KEY"],
            agents=f"""
            - name: claude-code
              binary: {claude}
              model: sonnet
              audit_requests: true
              env:
                ANTHROPIC_API_KEY: "{{{{ secrets.FAKE_ANTHROPIC_KEY }}}}"
                ANTHROPIC_BASE_URL: {server.url}
            """,
            checks=("loaded: deploy-notes", "skill_used: deploy-notes"),
        )
        path.write_text(path.read_text().replace("prompt_text: Say hello.", "prompt_text: /deploy-notes"))
        result = invoke("eval", "evals", env={"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY})
        requests = server.model_requests()
    assert result.exit_code == 1, result.output
    # The skill's body, sent as part of the user's turn.
    assert requests and all("Write NOTES.md." in json.dumps(r.body) for r in requests)
    folder = tmp_path / ".trialbook/runs/latest/evals/slash/claude-code/trial-1"
    assert loaded_rows(folder / "result.json")[".claude/skills/deploy-notes"] is True
    checks = json.loads((folder / "result.json").read_text())["assertions"]
    assert [(check["kind"], check["passed"]) for check in checks] == [("loaded", True), ("skill_used", False)]
    assert "no tool call invoked deploy-notes" in checks[1]["actual"]


def test_loaded_is_decided_by_the_placed_file_not_by_the_same_words_in_another(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The template holds CLAUDE.md and AGENTS.md with the same words; the eval places AGENTS.md (and,
    # in a second eval, CLAUDE.md) with those words. Claude Code sends CLAUDE.md's copy, headed by its
    # path: only the placed CLAUDE.md counts as loaded, never AGENTS.md through its twin's text.
    claude = ensure_cli("@anthropic-ai/claude-code")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    words = "House rule marker-twin-61d0: answer in one word.\n"
    for name in ("AGENTS.md", "CLAUDE.md"):
        (tmp_path / "template").mkdir(exist_ok=True)
        (tmp_path / "template" / name).write_text(words)
        (tmp_path / "repo").mkdir(exist_ok=True)
        (tmp_path / "repo" / name).write_text(words)
    with ModelServer([say("Hello.")]) as server:
        for placed in ("AGENTS.md", "CLAUDE.md"):
            stem = placed.split(".")[0].lower()
            (tmp_path / "evals").mkdir(exist_ok=True)
            (tmp_path / "evals" / f"{stem}.eval.yaml").write_text(
                "prompt_text: Say hello.\n"
                "secrets: [FAKE_ANTHROPIC_KEY]\n"
                "negative_control: false\n"
                "sandbox: {template: ../template}\n"
                f"instructions: [../repo/{placed}]\n"
                "agents:\n"
                f"  - {{name: claude-code, binary: {claude}, model: sonnet, audit_requests: true,\n"
                "     env: {ANTHROPIC_API_KEY: '{{ secrets.FAKE_ANTHROPIC_KEY }}', "
                f"ANTHROPIC_BASE_URL: {server.url}}}}}\n"
                f"assert: [loaded: {placed}]\n"
                "timeout: 3m\n"
            )
        result = invoke("eval", "evals", env={"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY})
        requests = server.model_requests()
    assert requests and all("marker-twin-61d0" in json.dumps(r.body) for r in requests)
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert {test.id: test.outcome for test in suite.tests} == {
        "agents::claude-code": "failed",
        "claude::claude-code": "passed",
    }, result.output
    runs = tmp_path / ".trialbook/runs/latest/evals"
    assert loaded_rows(runs / "agents/claude-code/trial-1/result.json") == {"AGENTS.md": False}
    assert loaded_rows(runs / "claude/claude-code/trial-1/result.json") == {"CLAUDE.md": True}
