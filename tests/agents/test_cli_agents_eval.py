"""The examples' deploy guide run by the real Claude Code and Codex binaries through ``trialbook eval``.

Both agents talk to one loopback fake model server that scripts the same tool call: follow the guide in
one shell command, then report. The sandbox shims, call logs, assertions and secret masking are the real
ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell
from tests.system import ensure
from trialbook.evidence import load_suite

from ..runner.conftest import Invoke, invoke
from ._deploy_eval import EXPECTED_CALLS, FOLLOW_THE_GUIDE, calls_of, write_deploy_eval

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

ANTHROPIC_KEY = "sk-ant-fake-" + "a7" * 20
CODEX_KEY = "sk-fake-codex-" + "c3" * 20


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_claude_code_and_codex_follow_the_examples_guide(
    invoke: Invoke, tmp_path: Path, no_model_credentials: None, isolation: str
) -> None:
    """Also in bubblewrap with ``network: model``: the model server is all the CLIs reach."""
    if isolation == "bwrap":
        ensure("bubblewrap")
    claude, codex = ensure_cli("@anthropic-ai/claude-code"), ensure_cli("@openai/codex")
    with ModelServer([shell(FOLLOW_THE_GUIDE), say("Deployed to production.")]) as server:
        write_deploy_eval(
            tmp_path,
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
        if isolation == "bwrap":
            path = tmp_path / "evals/deploy.eval.yaml"
            isolated = "sandbox: {isolation: bwrap, network: model, template: "
            path.write_text(path.read_text().replace("sandbox: {template: ", isolated))
        result = invoke(
            "eval", "evals", env={"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY, "FAKE_CODEX_KEY": CODEX_KEY}
        )
    assert result.exit_code == 0, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert {test.id: test.outcome for test in suite.tests} == {
        "deploy::claude-code": "passed",
        "deploy::codex": "passed",
    }
    assert {test.properties["sandbox"]["isolation"] for test in suite.tests} == {isolation}  # type: ignore[index,call-overload]
    claude_run = suite.tests[0].executions[0].result
    codex_run = suite.tests[1].executions[0].result
    if isolation == "bwrap":  # watched: only the name lookups the CLIs try on their own were refused
        for run in (claude_run, codex_run):
            assert run.network_refused is not None
            assert [c for c in run.network_refused if c.port != 53] == [], run.network_refused
    assert claude_run.cost_usd is not None
    assert codex_run.cost_usd is None  # Codex reports no cost: unknown, never 0
    assert "cost estimated from token counts (the agent reports none) for 1 trial: deploy [codex]" in (
        result.output
    )
    for agent in ("claude-code", "codex"):
        folder = tmp_path / f".trialbook/runs/latest/evals/deploy/{agent}/trial-1"
        assert calls_of(folder) == EXPECTED_CALLS
    for path in (tmp_path / ".trialbook").rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert ANTHROPIC_KEY.encode() not in data, path
            assert CODEX_KEY.encode() not in data, path
