import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, wait_gone
from trialbook import __version__
from trialbook.agents import AgentSpec, AgentTask, ScriptAgent, create_agent, script_agent
from trialbook.errors import ConfigError
from trialbook.sandbox import Sandbox, ShimConfig, create_sandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    shims = [ShimConfig("neon", "stub", "echo neon ok")]
    with create_sandbox(
        root=tmp_path / "trials", template=None, shims=shims, secrets={"TOKEN": "t0k"}, extra_env={}
    ) as box:
        yield box


def make_task(sandbox: Sandbox, tmp_path: Path, timeout_s: float = 60) -> AgentTask:
    return AgentTask(
        prompt="Create the project\nwith care",
        workdir=sandbox.workdir,
        home=sandbox.home,
        env=sandbox.env,
        output_dir=tmp_path / "out",
        timeout_s=timeout_s,
    )


def fake_agent(task: AgentTask) -> str:
    (task.workdir / "done.txt").write_text(task.prompt)
    return "done"


@pytest.mark.asyncio
async def test_shell_script_gets_the_prompt_and_the_sandbox(sandbox: Sandbox, tmp_path: Path) -> None:
    script = 'cat > stdin.txt; printf %s "$TRIALBOOK_PROMPT" > env.txt; neon init\n'
    script += 'echo "token=$TOKEN"; echo warn >&2'
    agent = create_agent(script_agent("fake", script))
    assert isinstance(agent, ScriptAgent)
    assert agent.name == "fake"
    result = await agent.run(make_task(sandbox, tmp_path))
    assert result.success
    assert result.stop_reason == "completed"
    assert result.agent_version == __version__
    assert result.cost_usd == 0.0
    assert result.usage == ()
    assert (sandbox.workdir / "stdin.txt").read_text() == "Create the project\nwith care"
    assert (sandbox.workdir / "env.txt").read_text() == "Create the project\nwith care"
    assert [call.line for call in sandbox.read_calls()] == ["neon init"]
    [call] = result.all_tool_calls
    assert call.name == "bash"
    assert call.arguments == {"command": script}
    assert call.result == "neon ok\ntoken=t0k\nwarn\n"
    assert call.success is True
    assert result.final_response == "neon ok\ntoken=t0k\nwarn\n"
    assert [t.tool_call_ids for t in result.turns] == [(), ("script-1",), ()]
    assert "neon ok" in (tmp_path / "out" / "script.log").read_text()


@pytest.mark.asyncio
async def test_shell_script_failure_is_an_execution_error(sandbox: Sandbox, tmp_path: Path) -> None:
    agent = create_agent(AgentSpec("fake", {"script": "echo trying; exit 7"}))
    result = await agent.run(make_task(sandbox, tmp_path))
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error == "the script exited with code 7"
    [call] = result.all_tool_calls
    assert call.success is False
    assert call.result == "trying\n"


@pytest.mark.asyncio
async def test_shell_script_timeout_kills_its_children(sandbox: Sandbox, tmp_path: Path) -> None:
    agent = create_agent(script_agent("slow", "sleep 1000 & echo $! > pids; echo started; wait"))
    result = await agent.run(make_task(sandbox, tmp_path, timeout_s=0.5))
    assert not result.success
    assert result.stop_reason == "timeout"
    assert result.error == "the script timed out after 0.5s"
    assert result.all_tool_calls[0].result == "started\n"
    assert wait_gone(read_pids(sandbox.workdir / "pids")) == []


@pytest.mark.asyncio
async def test_python_function_agent(sandbox: Sandbox, tmp_path: Path) -> None:
    entry = script_agent("py", fake_agent)
    assert entry.options == {"python": "tests.agents.test_script:fake_agent"}
    result = await create_agent(entry).run(make_task(sandbox, tmp_path))
    assert result.success
    assert (sandbox.workdir / "done.txt").read_text() == "Create the project\nwith care"
    [call] = result.all_tool_calls
    assert call.name == "python"
    assert call.arguments == {"function": "tests.agents.test_script:fake_agent"}
    assert result.final_response == "done"


@pytest.mark.asyncio
async def test_python_function_is_found_by_import_in_a_fresh_entry(sandbox: Sandbox, tmp_path: Path) -> None:
    # As an eval file would write it, without script_agent having been called in this process.
    agent = create_agent(AgentSpec("py", {"python": "tests.agents.test_script:fake_agent"}))
    assert (await agent.run(make_task(sandbox, tmp_path))).final_response == "done"


@pytest.mark.asyncio
async def test_async_function_and_lambdas(sandbox: Sandbox, tmp_path: Path) -> None:
    async def quiet(task: AgentTask) -> None:
        await asyncio.sleep(0)

    result = await create_agent(script_agent("quiet", quiet)).run(make_task(sandbox, tmp_path))
    assert result.success
    assert result.final_response is None  # said nothing: no text, not ""
    first = script_agent("a", lambda task: "first")
    second = script_agent("b", lambda task: "second")
    assert first.options != second.options
    assert (await create_agent(second).run(make_task(sandbox, tmp_path))).final_response == "second"


@pytest.mark.asyncio
async def test_function_errors_and_timeouts(sandbox: Sandbox, tmp_path: Path) -> None:
    def broken(task: AgentTask) -> str:
        raise RuntimeError("no network")

    async def slow(task: AgentTask) -> str:
        await asyncio.sleep(1000)
        return "never"

    def wrong(task: AgentTask) -> str:
        return 42  # type: ignore[return-value]

    result = await create_agent(script_agent("broken", broken)).run(make_task(sandbox, tmp_path))
    assert not result.success
    assert result.stop_reason == "execution_error"
    assert result.error == "RuntimeError: no network"
    result = await create_agent(script_agent("slow", slow)).run(make_task(sandbox, tmp_path, timeout_s=0.2))
    assert result.stop_reason == "timeout"
    result = await create_agent(script_agent("wrong", wrong)).run(make_task(sandbox, tmp_path))
    assert result.error == "the function returned int; return the agent's message as str or None"


@pytest.mark.asyncio
async def test_a_blocking_function_does_not_block_other_trials(sandbox: Sandbox, tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()

    def blocking(task: AgentTask) -> str:
        started.set()
        release.wait(60)  # blocks its thread until the test has seen the loop turn
        return "slept"

    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        for _ in range(5):
            await asyncio.sleep(0.01)
            ticks += 1

    run = asyncio.create_task(create_agent(script_agent("b", blocking)).run(make_task(sandbox, tmp_path)))
    while not started.is_set():
        await asyncio.sleep(0.001)
    await ticker()
    assert not run.done()  # the loop kept turning while the function blocked in its thread
    assert ticks == 5
    release.set()
    assert (await run).final_response == "slept"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"script": ""}, "script: expected a non-empty bash script"),
        ({"script": "true", "python": "a:b"}, "give exactly one of script or python"),
        ({"script": "true", "model": "gpt-5"}, "model: unknown option"),
        ({"python": "tests.agents.nowhere:fn"}, "python: cannot load 'tests.agents.nowhere:fn'"),
        ({"python": "tests.agents.test_script:AWAY"}, "python: cannot load"),
    ],
)
def test_bad_script_entries_name_the_source(options: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=r"^evals/a\.eval\.yaml:4: ") as info:
        create_agent(AgentSpec("fake", options, source="evals/a.eval.yaml:4"))
    assert message in str(info.value)
