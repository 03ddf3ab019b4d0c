"""The examples' deploy guide run by the real Claude Code and Codex binaries through ``trialbook eval``.

Both agents talk to one loopback fake model server that scripts the same tool call: follow the guide in
one shell command, then report. The sandbox shims, call logs, assertions and secret masking are the real
ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell
from trialbook.evidence import load_suite

from ..runner.conftest import EXAMPLES, Invoke, invoke, write

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

ANTHROPIC_KEY = "sk-ant-fake-" + "a7" * 20
CODEX_KEY = "sk-fake-codex-" + "c3" * 20

FOLLOW_THE_GUIDE = (
    "acme init --project-id demo --region eu-west"
    ' && printf \'project = "demo"\\nregion = "eu-west"\\nentry = "app/main.py"\\n\' > acme.toml'
    " && acme env pull > .env.local"
    " && python3 app/check.py"
    " && acme deploy --prod"
)


def test_claude_code_and_codex_follow_the_examples_guide(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = ensure_cli("@anthropic-ai/claude-code"), ensure_cli("@openai/codex")
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CODEX_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with ModelServer([shell(FOLLOW_THE_GUIDE), say("Deployed to production.")]) as server:
        write(
            tmp_path / "evals/deploy.eval.yaml",
            f"""
            prompt: {EXAMPLES / "docs/deploy-guide.md"}
            params: {{project: demo, region: eu-west}}
            secrets: [FAKE_ANTHROPIC_KEY, FAKE_CODEX_KEY]
            agents:
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
            sandbox: {{template: {EXAMPLES / "evals/template"}}}
            shims:
              acme:
                script: |
                  case "$1" in
                    init) echo "created project $3" ;;
                    env) echo "DATABASE_URL=postgres://demo:5432/app" ;;
                    deploy) echo "deployed" ;;
                  esac
              python3: passthrough
            assert:
              - ran_in_order: ["/acme init .*--project-id demo/", "acme env pull", "acme deploy --prod"]
              - not_ran: acme delete
              - file_exists: acme.toml
              - file_contains: {{path: .env.local, pattern: "/^DATABASE_URL=postgres:/"}}
              - succeeds: python3 app/check.py
            timeout: 3m
            """,
        )
        result = invoke(
            "eval", "evals", env={"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY, "FAKE_CODEX_KEY": CODEX_KEY}
        )
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/results/suite.json")
    assert {test.id: test.outcome for test in suite.tests} == {
        "deploy::claude-code": "passed",
        "deploy::codex": "passed",
    }
    claude_run = suite.tests[0].executions[0].result
    codex_run = suite.tests[1].executions[0].result
    assert claude_run.cost_usd is not None
    assert codex_run.cost_usd is None  # Codex reports no cost: unknown, never 0
    assert "cost estimated from token counts (the agent reports none) for 1 trial(s): deploy [codex]" in (
        result.output
    )
    for agent in ("claude-code", "codex"):
        folder = tmp_path / f".trialbook/results/evals/deploy/{agent}/trial-1"
        calls = [json.loads(line)["argv"] for line in (folder / "calls.jsonl").read_text().splitlines()]
        assert calls == [
            ["acme", "init", "--project-id", "demo", "--region", "eu-west"],
            ["acme", "env", "pull"],
            ["python3", "app/check.py"],
            ["acme", "deploy", "--prod"],
        ]
    for path in (tmp_path / ".trialbook").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert ANTHROPIC_KEY.encode() not in data, path
            assert CODEX_KEY.encode() not in data, path
