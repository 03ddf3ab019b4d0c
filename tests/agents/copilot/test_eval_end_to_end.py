"""An examples-style eval with ``agents: [copilot]`` through ``trialbook eval``, on the real Copilot CLI.

The model is a loopback chat-completions fake reached through a bring-your-own-key provider whose key is a
declared secret; the sandbox, shims, assertions and masking are the real ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.openai_chat import ChatServer, call, text
from trialbook.evidence import CopilotResult, load_suite

from ...runner.conftest import EXAMPLES, Invoke, invoke, write
from ..test_cli_agents_eval import FOLLOW_THE_GUIDE

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

PROVIDER_KEY = "sk-provider-fake-" + "9d" * 20


def test_copilot_follows_the_examples_guide_through_trialbook_eval(
    invoke: Invoke, tmp_path: Path, copilot_cli: str, pkg_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    script = [call("bash", command=FOLLOW_THE_GUIDE, description="follow the guide"), text("Deployed.")]
    with ChatServer(script) as server:
        write(
            tmp_path / "evals/deploy.eval.yaml",
            f"""
            prompt: {EXAMPLES / "docs/deploy-guide.md"}
            params: {{project: demo, region: eu-west}}
            secrets: [FAKE_PROVIDER_KEY]
            agents:
              - name: copilot
                cli_path: {copilot_cli}
                model: fake-model
                provider:
                  type: openai
                  base_url: {server.base_url}
                  api_key: "{{{{ secrets.FAKE_PROVIDER_KEY }}}}"
                env: {{COPILOT_PKG_CACHE_HOME: {pkg_cache}}}
            trials: 2
            sandbox: {{template: {EXAMPLES / "evals/template"}}}
            shims:
              acme:
                script: |
                  case "$1" in
                    env) echo "DATABASE_URL=postgres://demo:5432/app" ;;
                    *) echo "acme $1 ok" ;;
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
        result = invoke("eval", "evals", env={"FAKE_PROVIDER_KEY": PROVIDER_KEY})
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/results/suite.json")
    (test,) = suite.tests
    assert (test.id, test.outcome, len(test.executions)) == ("deploy::copilot", "passed", 2)
    for execution in test.executions:
        evidence = execution.result
        assert isinstance(evidence, CopilotResult)
        assert evidence.success
        assert evidence.evidence_complete
        assert evidence.agent_version == "1.0.102"
        assert evidence.final_response == "Deployed."
        folder = tmp_path / f".trialbook/results/evals/deploy/copilot/trial-{execution.trial}"
        calls = [json.loads(line)["argv"][:2] for line in (folder / "calls.jsonl").read_text().splitlines()]
        assert calls == [["acme", "init"], ["acme", "env"], ["python3", "app/check.py"], ["acme", "deploy"]]
    for path in (tmp_path / ".trialbook").rglob("*"):
        if path.is_file():
            assert PROVIDER_KEY.encode() not in path.read_bytes(), path
