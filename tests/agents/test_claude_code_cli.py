"""The claude-code adapter driving the real, pinned ``claude`` binary against the loopback fake model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agents._cli_trial import FAKE_KEY, make_trial
from tests.clis import ensure_cli, version_of
from tests.deadlines import growing
from tests.fakes.model_server import ModelServer, hang, say, shell
from trialbook.agents import Agent, AgentSpec
from trialbook.agents.claude_code import create
from trialbook.evidence import JsonValue, dump_result, load_result

pytestmark = pytest.mark.real_cli

WRITE_AND_DEPLOY = "echo hi > out.txt && env > env.txt && vendorcli deploy --prod"
BACKGROUND_SLEEPER = "tail -f /dev/null & echo $! > sleeper.pid"
"""A process left running in the background (newer Claude Code blocks a plain long `sleep` outright)."""


@pytest.fixture(scope="module")
def claude() -> Path:
    return ensure_cli("@anthropic-ai/claude-code")


@pytest.fixture(autouse=True)
def runner_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # Nothing from the test runner's own credentials may reach a test run; a marker shows isolation.
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRIALBOOK_RUNNER_ONLY", "must-not-leak")


def _agent(claude: Path, **options: JsonValue) -> Agent:
    return create(AgentSpec("claude-code", {"binary": str(claude), **options}))


def _env(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": server.url}


@pytest.mark.asyncio
async def test_a_scripted_tool_call_leaves_correlated_evidence(claude: Path, tmp_path: Path) -> None:
    with ModelServer([shell(WRITE_AND_DEPLOY), say("Deployed.")]) as server:
        trial = make_trial(tmp_path, env=_env(server))
        agent = create(AgentSpec("claude-code", {"binary": str(claude), "model": "sonnet"}))
        result = await agent.run(trial.task)
        requests = server.model_requests()

    assert result.success, result.error
    assert result.stop_reason == "completed"
    assert (trial.task.workdir / "out.txt").read_text() == "hi\n"
    assert trial.calls == ["vendorcli deploy --prod"]
    (call,) = result.all_tool_calls
    assert call.name == "Bash"
    assert isinstance(call.arguments, dict)
    assert call.arguments["command"] == WRITE_AND_DEPLOY
    assert call.completion_received is True
    assert call.success is True
    assert call.result is not None
    assert [t.role for t in result.turns] == ["user", "assistant", "assistant"]
    assert result.turns[1].tool_call_ids == (call.call_id,)
    assert result.final_response == "Deployed."
    # Two requests of 120 input / 30 output tokens each, as the fake reported them. The model is the one
    # the CLI asked for (the `sonnet` alias resolves differently across releases): read from the request.
    asked = {r.body["model"] for r in requests}
    assert len(asked) == 1 and result.model_used in asked
    assert (result.model_used or "").startswith("claude-sonnet")
    assert (result.total_input_tokens, result.total_output_tokens) == (240, 60)
    assert result.usage[0].model == result.model_used
    final = json.loads((trial.task.output_dir / "claude.jsonl").read_text().splitlines()[-1])
    assert result.cost_usd is not None
    assert result.cost_usd > 0
    assert result.cost_usd == final["total_cost_usd"]
    assert result.agent_version == agent.version() == version_of("@anthropic-ai/claude-code")
    assert result.evidence_complete
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result
    # The request carried the key, and the second one the tool's output.
    assert len(requests) == 2
    assert requests[0].headers["x-api-key"] == FAKE_KEY
    assert any(b.get("type") == "tool_result" for b in requests[1].body["messages"][-1]["content"])


@pytest.mark.asyncio
async def test_the_agent_process_gets_only_the_documented_environment(claude: Path, tmp_path: Path) -> None:
    with ModelServer([shell(WRITE_AND_DEPLOY), say("Deployed.")]) as server:
        trial = make_trial(tmp_path, env=_env(server))
        result = await _agent(claude).run(trial.task)
    assert result.success, result.error
    seen = dict(
        line.split("=", 1)
        for line in (trial.task.workdir / "env.txt").read_text().splitlines()
        if "=" in line
    )
    assert "TRIALBOOK_RUNNER_ONLY" not in seen
    assert seen["HOME"] == str(trial.task.home)
    assert seen["CLAUDE_CONFIG_DIR"] == str(trial.task.home / ".claude")
    assert seen["DISABLE_TELEMETRY"] == seen["DISABLE_AUTOUPDATER"] == "1"
    assert seen["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert (trial.task.home / ".claude").is_dir()
    assert FAKE_KEY not in (trial.task.output_dir / "claude.jsonl").read_text()


@pytest.mark.asyncio
async def test_max_turns_stops_the_session(claude: Path, tmp_path: Path) -> None:
    script = [shell("echo one > a.txt"), shell("echo two > b.txt"), say("done")]
    with ModelServer(script) as server:
        trial = make_trial(tmp_path, env=_env(server))
        result = await _agent(claude, max_turns=1).run(trial.task)
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert result.error.startswith("error_max_turns")
    assert (trial.task.workdir / "a.txt").exists()
    assert not (trial.task.workdir / "b.txt").exists()
    assert result.total_input_tokens == 120


@pytest.mark.asyncio
async def test_the_cost_cap_stops_the_session_with_real_token_counts(claude: Path, tmp_path: Path) -> None:
    with ModelServer([shell("echo hi > out.txt", input_tokens=5000), say("done")]) as server:
        trial = make_trial(tmp_path, env=_env(server), max_cost_usd=0.001)
        result = await _agent(claude).run(trial.task)
        turns = [r for r in server.requests if isinstance(r.body, dict) and "messages" in r.body]
    assert not result.success
    assert result.error is not None
    assert result.error.startswith("error_max_budget_usd")
    # The result event's aggregate usage is all zeros here; modelUsage holds the real counts.
    assert result.total_input_tokens == 5000
    assert result.cost_usd is not None
    assert result.cost_usd > 0.001
    # The cap ends the session before the model is asked again. Whether Claude Code had already started
    # the requested ``echo`` when it checked the cap is a race inside the CLI (a loaded CI run once found
    # out.txt written): not asserted either way.
    assert len(turns) == 1
    (call,) = result.all_tool_calls
    assert call.completion_received is False  # requested; no result came back before the session ended


@pytest.mark.asyncio
async def test_a_rejected_key_fails_at_once_with_a_clear_error(claude: Path, tmp_path: Path) -> None:
    with ModelServer([say("never sent")], fail_status=401) as server:
        trial = make_trial(tmp_path, env=_env(server))
        result = await _agent(claude).run(trial.task)
        attempts = len(server.model_requests())
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    assert "401" in result.error
    # The CLI alone would retry 10 times with backoff; the adapter gives up after at most a few.
    assert 1 <= attempts <= 3


@pytest.mark.asyncio
async def test_an_unreachable_endpoint_fails_after_few_retries(
    claude: Path, tmp_path: Path, closed_port: int
) -> None:
    closed = f"http://127.0.0.1:{closed_port}"
    trial = make_trial(
        tmp_path, env={"ANTHROPIC_API_KEY": FAKE_KEY, "ANTHROPIC_BASE_URL": closed}, timeout_s=120
    )
    result = await _agent(claude).run(trial.task)
    assert result.stop_reason == "execution_error"
    assert result.error is not None
    # The wording moves between releases ("Unable to connect", "Connection refused … (ECONNREFUSED)"):
    # what is checked is that it says the endpoint could not be reached.
    assert any(words in result.error for words in ("Unable to connect", "ECONNREFUSED")), result.error
    retries = [e for e in result.raw_events if isinstance(e, dict) and e.get("subtype") == "api_retry"]
    assert [e["max_retries"] for e in retries] == [2, 2]  # CLAUDE_CODE_MAX_RETRIES, not the CLI's 10


@pytest.mark.asyncio
async def test_a_timeout_kills_every_process_and_leaves_usage_unknown(claude: Path, tmp_path: Path) -> None:
    # The tool leaves a process behind in the background, then the model never answers again. The
    # timeout grows until it came after the CLI's start and its tool call: the test is about what the
    # timeout does, not how soon it comes.
    with ModelServer([shell(BACKGROUND_SLEEPER), hang()]) as server:
        for timeout in growing(5):
            trial = make_trial(tmp_path / f"timeout-{timeout:g}", env=_env(server), timeout_s=timeout)
            result = await _agent(claude).run(trial.task)
            if (trial.task.workdir / "sleeper.pid").exists():
                break
        else:
            pytest.fail("the tool call never ran")
    assert result.stop_reason == "timeout"
    assert not result.success
    assert result.error is not None
    assert f"{timeout:g} s" in result.error
    assert result.usage == ()
    assert result.total_input_tokens is None
    assert result.cost_usd is None
    assert not _alive(int((trial.task.workdir / "sleeper.pid").read_text()))
    assert "without a result event" in " ".join(result.capture_errors)


@pytest.mark.asyncio
async def test_processes_the_agent_leaves_behind_do_not_outlive_the_trial(
    claude: Path, tmp_path: Path
) -> None:
    # Claude Code runs its shell tool in a new session: the process-group kill alone would miss this.
    with ModelServer([shell(BACKGROUND_SLEEPER), say("started")]) as server:
        trial = make_trial(tmp_path, env=_env(server))
        result = await _agent(claude).run(trial.task)
    assert result.success, result.error
    assert not _alive(int((trial.task.workdir / "sleeper.pid").read_text()))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    # A zombie nobody reaped is dead for our purpose.
    return not (status.exists() and "\nState:\tZ" in status.read_text())
