"""The codex adapter driving the real, pinned ``codex`` binary against the loopback fake model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agents._cli_trial import FAKE_KEY, make_trial
from tests.clis import ensure_cli
from tests.deadlines import growing
from tests.fakes.model_server import ModelServer, Reply, hang, say, shell
from trialbook.agents import Agent, AgentSpec
from trialbook.agents.codex import create
from trialbook.evidence import JsonValue, dump_result, load_result

pytestmark = pytest.mark.real_cli

WRITE_AND_DEPLOY = "echo hi > out.txt && env > env.txt && vendorcli deploy --prod"
BACKGROUND_SLEEPER = "sleep 300 & echo $! > sleeper.pid"


@pytest.fixture(scope="module")
def codex() -> Path:
    return ensure_cli("@openai/codex")


@pytest.fixture(autouse=True)
def runner_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CODEX_API_KEY", "OPENAI_API_KEY", "CODEX_HOME", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRIALBOOK_RUNNER_ONLY", "must-not-leak")


def _agent(codex: Path, base_url: str, **options: JsonValue) -> Agent:
    return create(
        AgentSpec("codex", {"binary": str(codex), "model": "gpt-5.5", "base_url": base_url, **options})
    )


@pytest.mark.asyncio
async def test_a_scripted_tool_call_leaves_correlated_evidence(codex: Path, tmp_path: Path) -> None:
    script = [
        Reply(text="Writing the file, then deploying.", command=WRITE_AND_DEPLOY),
        say("Deployed.", cache_read_tokens=40),
    ]
    with ModelServer(script) as server:
        trial = make_trial(tmp_path, env={"CODEX_API_KEY": FAKE_KEY})
        agent = _agent(codex, server.openai_url)
        result = await agent.run(trial.task)
        requests = server.model_requests()

    assert result.success, result.error
    assert result.stop_reason == "completed"
    assert (trial.task.workdir / "out.txt").read_text() == "hi\n"
    # Commands run without a login shell, so the trial's shims stay first on PATH.
    assert trial.calls == ["vendorcli deploy --prod"]
    (call,) = result.all_tool_calls
    assert call.name == "command_execution"
    assert isinstance(call.arguments, dict)
    assert WRITE_AND_DEPLOY in str(call.arguments["command"])
    assert call.completion_received is True
    assert call.success is True
    assert call.result == ""
    assert [t.content for t in result.turns] == [
        trial.task.prompt,
        "Writing the file, then deploying.",
        "Deployed.",
    ]
    assert result.turns[2].tool_call_ids == (call.call_id,)
    # Usage is the thread total Codex reported: 120 + (120 + 40) input, 30 + 30 output.
    (usage,) = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (280, 60, 40)
    assert usage.model == result.model_used == "gpt-5.5"
    assert result.cost_usd is None
    assert result.agent_version == agent.version() == "0.171.0"
    assert result.evidence_complete, result.capture_errors
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result
    assert len(requests) == 2
    assert requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"
    assert (trial.task.output_dir / "codex.rollout.jsonl").exists()
    seen = dict(
        line.split("=", 1)
        for line in (trial.task.workdir / "env.txt").read_text().splitlines()
        if "=" in line
    )
    assert "TRIALBOOK_RUNNER_ONLY" not in seen
    assert seen["CODEX_HOME"] == str(trial.task.home / ".codex")


@pytest.mark.asyncio
async def test_a_failed_command_is_recorded_with_its_output(codex: Path, tmp_path: Path) -> None:
    with ModelServer([shell("cat missing.txt"), say("It is missing.")]) as server:
        trial = make_trial(tmp_path, env={"OPENAI_API_KEY": FAKE_KEY})
        result = await _agent(codex, server.openai_url).run(trial.task)
    assert result.success, result.error
    (call,) = result.all_tool_calls
    assert call.success is False
    assert call.result is not None
    assert "missing.txt" in call.result
    assert call.error == "failed: exit code 1"


@pytest.mark.asyncio
async def test_a_rejected_key_fails_at_once_with_a_clear_error(codex: Path, tmp_path: Path) -> None:
    # The first request is refused; a retry is held open, so however slowly the adapter reacts to the
    # refusal, Codex cannot send a third: an adapter that did not stop would time out instead.
    with ModelServer([hang()], fail_status=401, fail_times=1) as server:
        trial = make_trial(tmp_path, env={"CODEX_API_KEY": FAKE_KEY})
        result = await _agent(codex, server.openai_url).run(trial.task)
        attempts = len(server.model_requests())
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert "rejected the credentials" in result.error
    assert "401" in result.error
    assert FAKE_KEY not in result.error
    # Codex alone retries five times with backoff before giving up.
    assert attempts in (1, 2)
    assert result.usage == ()


@pytest.mark.asyncio
async def test_an_unreachable_endpoint_fails_instead_of_waiting_forever(
    codex: Path, tmp_path: Path, closed_port: int
) -> None:
    closed = f"http://127.0.0.1:{closed_port}/v1"
    trial = make_trial(tmp_path, env={"CODEX_API_KEY": FAKE_KEY}, timeout_s=120)
    result = await _agent(codex, closed).run(trial.task)
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert "cannot be reached" in result.error


@pytest.mark.asyncio
async def test_a_timeout_kills_every_process_and_leaves_usage_unknown(codex: Path, tmp_path: Path) -> None:
    with ModelServer([shell(BACKGROUND_SLEEPER), hang()]) as server:
        for timeout in growing(4):  # until it came after the tool call (see tests.deadlines)
            trial = make_trial(
                tmp_path / f"timeout-{timeout:g}", env={"CODEX_API_KEY": FAKE_KEY}, timeout_s=timeout
            )
            result = await _agent(codex, server.openai_url).run(trial.task)
            if (trial.task.workdir / "sleeper.pid").exists():
                break
        else:
            pytest.fail("the tool call never ran")
    assert result.stop_reason == "timeout"
    assert not result.success
    assert result.usage == ()
    assert result.total_input_tokens is None
    assert result.cost_usd is None
    assert not _alive(int((trial.task.workdir / "sleeper.pid").read_text()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "\nState:\tZ" in status.read_text())
