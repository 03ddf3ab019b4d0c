"""The ``copilot_eval`` fixture with the real Copilot CLI and a loopback model."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.clis import CACHE, ensure_cli
from trialbook.agents.copilot import CopilotEval
from trialbook.pytest_plugin._fixtures import CopilotEvalRunner
from trialbook.pytest_plugin._state import STATE
from trialbook.testing import ChatServer, call, text


@pytest.mark.real_cli
@pytest.mark.asyncio
async def test_copilot_eval_runs_and_records_the_execution(
    copilot_eval: CopilotEvalRunner,
    loopback_model: Callable[..., ChatServer],
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    cli = str(ensure_cli("@github/copilot"))
    (CACHE / "copilot-pkg").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "home"),
        "COPILOT_PKG_CACHE_HOME": str(CACHE / "copilot-pkg"),
    }
    server = loopback_model([call("bash", command="echo ok > ok.txt", description="x"), text("done")])
    agent = CopilotEval(
        model="fake-model", provider=server.provider(), cli_path=cli, working_directory=str(tmp_path)
    )
    result = await copilot_eval(agent, "write ok.txt", env=env)
    again = await copilot_eval(agent, "write ok.txt", env=env, comparison_role="b")
    assert result.success and again.success, (result.error, again.error)
    assert (tmp_path / "ok.txt").read_text() == "ok\n"
    progress = request.config.stash[STATE].running[request.node.nodeid]
    assert [e.result for e in progress.executions] == [result, again]
    assert progress.executions[1].comparison_role == "b"
