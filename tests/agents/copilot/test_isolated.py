"""The real Copilot CLI under `isolation: bwrap`, started by the SDK through the trial's script.

The model is the loopback chat-completions fake behind a bring-your-own-key provider: with `network:
model` it is the only place the CLI reaches; with `none` the trial fails naming it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_chat import ChatServer, call, text
from tests.system import ensure
from trialbook.evidence import CopilotResult, load_suite

from ...runner.conftest import Invoke, invoke
from .._deploy_eval import EXPECTED_CALLS, FOLLOW_THE_GUIDE, calls_of, write_deploy_eval

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

PROVIDER_KEY = "sk-provider-fake-" + "7e" * 20


def _run(invoke: Invoke, tmp_path: Path, copilot_cli: str, pkg_cache: str, network: str) -> tuple[int, str]:
    script = [call("bash", command=FOLLOW_THE_GUIDE, description="follow the guide"), text("Deployed.")]
    with ChatServer(script) as server:
        write_deploy_eval(
            tmp_path,
            secrets=["FAKE_PROVIDER_KEY"],
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
        path = tmp_path / "evals/deploy.eval.yaml"
        isolated = f"sandbox: {{isolation: bwrap, network: {network}, template: "
        path.write_text(path.read_text().replace("sandbox: {template: ", isolated))
        result = invoke("eval", "evals", env={"FAKE_PROVIDER_KEY": PROVIDER_KEY})
        return result.exit_code, result.output + f"\nport {server.base_url.split(':')[2].split('/')[0]}"


def test_copilot_runs_under_bwrap_reaching_only_its_provider(
    invoke: Invoke, tmp_path: Path, copilot_cli: str, pkg_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure("bubblewrap")
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    code, output = _run(invoke, tmp_path, copilot_cli, pkg_cache, "model")
    assert code == 0, output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    assert test.properties["sandbox"]["isolation"] == "bwrap"  # type: ignore[index,call-overload]
    (execution,) = test.executions
    result = execution.result
    assert isinstance(result, CopilotResult) and result.success
    # Watched from inside: what it wrote outside the project folder, and nothing refused it needed.
    assert result.outside_writes is not None and result.network_refused is not None
    assert calls_of(tmp_path / ".trialbook/runs/latest/evals/deploy/copilot/trial-1") == EXPECTED_CALLS


def test_copilot_under_bwrap_with_network_none_fails_naming_its_provider(
    invoke: Invoke, tmp_path: Path, copilot_cli: str, pkg_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ensure("bubblewrap")
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    code, output = _run(invoke, tmp_path, copilot_cli, pkg_cache, "none")
    port = int(output.rsplit("port ", 1)[1])
    assert code == 1, output
    (test,) = load_suite(tmp_path / ".trialbook/runs/latest/suite.json").tests
    result = test.executions[0].result
    assert not result.success
    assert result.network_refused is not None and ("127.0.0.1", port) in [
        (c.host, c.port) for c in result.network_refused
    ]
    why = f"network: none refused the trial's connections to 127.0.0.1:{port}"
    assert why in (result.error or ""), result.error
