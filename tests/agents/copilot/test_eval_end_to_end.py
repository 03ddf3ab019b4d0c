"""An examples-style eval with ``agents: [copilot]`` through ``trialbook eval``, on the real Copilot CLI.

The model is a loopback chat-completions fake reached through a bring-your-own-key provider whose key is a
declared secret; the sandbox, shims, assertions and masking are the real ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_chat import ChatServer, call, text
from trialbook.evidence import CopilotResult, load_suite

from ...runner.conftest import Invoke, invoke
from .._deploy_eval import EXPECTED_CALLS, FOLLOW_THE_GUIDE, calls_of, write_deploy_eval

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
        write_deploy_eval(
            tmp_path,
            secrets=["FAKE_PROVIDER_KEY"],
            trials=2,
            agents=f"""
            - name: copilot
              cli_path: {copilot_cli}
              model: fake-model
              provider:
                type: openai
                base_url: {server.base_url}
                api_key: "{{{{ secrets.FAKE_PROVIDER_KEY }}}}"
              env: {{COPILOT_PKG_CACHE_HOME: {pkg_cache}}}
            """,
        )
        result = invoke("eval", "evals", env={"FAKE_PROVIDER_KEY": PROVIDER_KEY})
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert (test.id, test.outcome, len(test.executions)) == ("deploy::copilot", "passed", 2)
    for execution in test.executions:
        evidence = execution.result
        assert isinstance(evidence, CopilotResult)
        assert evidence.success
        assert evidence.evidence_complete
        assert evidence.agent_version == "1.0.102"
        assert evidence.final_response == "Deployed."
        folder = tmp_path / f".trialbook/runs/latest/evals/deploy/copilot/trial-{execution.trial}"
        assert calls_of(folder) == EXPECTED_CALLS
    for path in (tmp_path / ".trialbook").rglob("*"):
        if path.is_file():
            assert PROVIDER_KEY.encode() not in path.read_bytes(), path
