"""Declared instruction files and skills reach the real Claude Code and Codex as each loads them natively.

The fake model's request log is the proof: a file's marker in a request means its text reached the model.
Without a request audit, the evidence lists every declared input as ``loaded: null``.
"""

from __future__ import annotations

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
}


def test_claude_code_gets_claude_md_and_codex_gets_agents_md_under_their_isolation(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = ensure_cli("@anthropic-ai/claude-code"), ensure_cli("@openai/codex")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CODEX_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    write_repo(tmp_path)
    with ModelServer([say("Hello.")]) as server:
        write_eval(
            tmp_path,
            "hello",
            secrets=["FAKE_ANTHROPIC_KEY", "FAKE_CODEX_KEY"],
            agents=f"""
            - name: claude-code
              binary: {claude}
              model: sonnet
              env:
                ANTHROPIC_API_KEY: "{{{{ secrets.FAKE_ANTHROPIC_KEY }}}}"
                ANTHROPIC_BASE_URL: {server.url}
            - name: codex
              binary: {codex}
              model: gpt-5.5
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
    # Claude Code keeps --bare and still reads the project's CLAUDE.md (never AGENTS.md); Codex reads
    # AGENTS.md from its working folder (never CLAUDE.md) and lists the skill placed in .agents/skills.
    assert all(markers_in(r.body) & PLACED == {"CLAUDE.md"} for r in by_agent["claude-code"])
    assert markers_in(by_agent["codex"][0].body) == {"AGENTS.md", "skill"}
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert {test.id: test.outcome for test in suite.tests} == {
        "hello::claude-code": "passed",
        "hello::codex": "passed",
    }
    skills_folder = {"claude-code": ".claude/skills", "codex": ".agents/skills"}
    for agent, folder in skills_folder.items():
        rows = loaded_rows(tmp_path / f".trialbook/runs/latest/evals/hello/{agent}/trial-1/result.json")
        # No request audit ran for these agents: nobody knows, so every row says null.
        assert rows == {**dict.fromkeys(PLACED), f"{folder}/deploy-notes": None}
