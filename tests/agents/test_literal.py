from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox.procs import read_pids, wait_gone
from trialbook.agents import AgentSpec, AgentTask, create_agent
from trialbook.agents.literal import LiteralAgent
from trialbook.errors import ConfigError
from trialbook.evidence import AgentResult
from trialbook.sandbox import Sandbox, ShimConfig, create_sandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    with create_sandbox(
        root=tmp_path / "trials",
        template=None,
        shims=[ShimConfig("neon", "stub", 'echo "neon: $*"')],
        secrets={},
        extra_env={},
    ) as box:
        yield box


async def run_literal(sandbox: Sandbox, prompt: str, output_dir: Path, timeout_s: float = 60) -> AgentResult:
    agent = create_agent(AgentSpec("literal"))
    assert isinstance(agent, LiteralAgent)
    task = AgentTask(
        prompt=prompt,
        workdir=sandbox.workdir,
        home=sandbox.home,
        env=sandbox.env,
        output_dir=output_dir,
        timeout_s=timeout_s,
    )
    return await agent.run(task)


GUIDE = """# Create the project

```bash
mkdir -p app && cd app
export PROJECT=demo
greet() { echo "hello $1"; }
```

Then initialise it:

```sh
neon init --project-id "$PROJECT"
greet "$PROJECT" > greeting.txt
pwd
```

```console
$ neon deploy
Deployed!
$ touch deployed
```
"""


@pytest.mark.asyncio
async def test_steps_run_in_order_in_one_shell(sandbox: Sandbox, tmp_path: Path) -> None:
    result = await run_literal(sandbox, GUIDE, tmp_path / "out")
    assert result.success
    assert result.stop_reason == "completed"
    assert result.error is None
    assert result.agent_name == "literal"
    assert result.cost_usd == 0.0
    assert result.usage == ()
    assert result.working_directory == str(sandbox.workdir)
    # cd, the exported variable and the function all carried into the next step
    assert (sandbox.workdir / "app" / "greeting.txt").read_text() == "hello demo\n"
    assert (sandbox.workdir / "app" / "deployed").exists()
    assert [call.line for call in sandbox.read_calls()] == ["neon init --project-id demo", "neon deploy"]
    assert [call.cwd for call in sandbox.read_calls()] == [str(sandbox.workdir / "app")] * 2
    calls = result.tool_calls_for("bash")
    assert [c.call_id for c in calls] == ["step-1", "step-2", "step-3"]
    assert all(c.success and c.completion_received and c.evidence_complete for c in calls)
    assert calls[1].result == f"neon: init --project-id demo\n{sandbox.workdir}/app\n"
    assert calls[2].arguments == {"command": "neon deploy\ntouch deployed\n"}  # expected output is not run
    assert calls[2].result == "neon: deploy\n"
    assert result.final_response == "Ran all 3 steps."
    assert [t.role for t in result.turns] == ["user", "assistant", "assistant", "assistant", "assistant"]
    log = (tmp_path / "out" / "literal.log").read_text()
    assert "step 2 of 3 (line 11), sh" in log
    # The log is the index of the steps; each output is stored once, in its step file.
    output = f"neon: init --project-id demo\n{sandbox.workdir}/app\n"
    assert f"--- output: literal/step-2.out, {len(output)} bytes ---\n--- exit code 0 ---" in log
    assert "neon: init" not in log
    assert (tmp_path / "out" / "literal/step-2.out").read_text() == output


@pytest.mark.asyncio
async def test_the_first_failing_step_stops_the_guide(sandbox: Sandbox, tmp_path: Path) -> None:
    prompt = (
        "```bash\ntouch one\n```\n\n"
        "```bash\necho before\nfalse\necho after > after.txt\n```\n\n"
        "```bash\ntouch three\n```\n"
    )
    result = await run_literal(sandbox, prompt, tmp_path / "out")
    # The shell ran to its end (completed), but the guide did not work: unsuccessful, with the step.
    assert not result.success
    assert result.stop_reason == "completed"
    assert result.error == "step 2 of 3 (line 5) failed with exit code 1; 1 later step not run"
    assert (sandbox.workdir / "one").exists()
    assert not (sandbox.workdir / "after.txt").exists()
    assert not (sandbox.workdir / "three").exists()
    first, second = result.all_tool_calls
    assert first.success is True
    assert second.success is False
    assert second.result == "before\n"
    assert second.error == "exit code 1"
    assert result.final_response == "Step 2 of 3 (line 5) failed with exit code 1; 1 later step not run."


@pytest.mark.asyncio
async def test_a_failure_inside_a_pipeline_counts(sandbox: Sandbox, tmp_path: Path) -> None:
    result = await run_literal(sandbox, "```bash\nfalse | cat\ntouch reached\n```\n", tmp_path / "out")
    assert not (sandbox.workdir / "reached").exists()
    assert result.all_tool_calls[0].success is False


@pytest.mark.asyncio
async def test_a_step_that_turns_errexit_off_still_fails_on_its_status(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    prompt = (
        "```bash\nset +e\nfalse\necho kept going\nexit_status() { return 3; }\nexit_status\n```\n\n"
        "```bash\ntouch two\n```\n"
    )
    result = await run_literal(sandbox, prompt, tmp_path / "out")
    [call] = result.all_tool_calls
    assert call.success is False
    assert call.result == "kept going\n"
    assert call.error == "exit code 3"
    assert not (sandbox.workdir / "two").exists()


@pytest.mark.asyncio
async def test_a_syntax_error_fails_its_own_step(sandbox: Sandbox, tmp_path: Path) -> None:
    prompt = '```bash\necho "unclosed\n```\n\n```bash\ntouch two\n```\n'
    result = await run_literal(sandbox, prompt, tmp_path / "out")
    [call] = result.all_tool_calls
    assert call.success is False
    assert call.result is not None
    assert "unexpected EOF" in call.result
    assert not (sandbox.workdir / "two").exists()


@pytest.mark.asyncio
async def test_commands_reading_stdin_get_end_of_file(sandbox: Sandbox, tmp_path: Path) -> None:
    result = await run_literal(sandbox, "```bash\nread -r answer || echo no input\n```\n", tmp_path / "out")
    assert result.all_tool_calls[0].result == "no input\n"


@pytest.mark.asyncio
async def test_timeout_stops_the_step_and_its_children(sandbox: Sandbox, tmp_path: Path) -> None:
    prompt = (
        "```bash\necho ok\n```\n\n"
        "```bash\nsleep 1000 & echo $! > pids\n"
        "( sleep 1000 & echo $! >> pids; wait ) &\necho waiting\nwait\n```\n"
    )
    result = await run_literal(sandbox, prompt, tmp_path / "out", timeout_s=1)
    assert not result.success
    assert result.stop_reason == "timeout"
    assert result.error == "timed out after 1s during step 2 of 2 (line 5)"
    first, second = result.all_tool_calls
    assert first.success is True
    assert second.success is False
    assert second.completion_received is True
    assert second.result == "waiting\n"
    assert second.error == "timed out after 1s"
    pids = read_pids(sandbox.workdir / "pids")
    assert len(pids) == 2
    assert wait_gone(pids) == []


@pytest.mark.asyncio
async def test_a_prompt_without_shell_blocks_runs_nothing(sandbox: Sandbox, tmp_path: Path) -> None:
    result = await run_literal(sandbox, "Just prose.\n\n```python\nprint(1)\n```\n", tmp_path / "out")
    assert result.success
    assert result.all_tool_calls == ()
    assert (
        result.final_response == "The prompt has no bash, sh, shell or console code block; nothing was run."
    )


def test_literal_takes_no_options() -> None:
    agent = create_agent(AgentSpec("literal", {"env": {"A": "1"}}))
    assert agent.available().ok
    assert agent.model is None
    assert agent.version() is not None
    with pytest.raises(ConfigError, match=r"evals/x.eval.yaml:3: agent 'literal': model: unknown option"):
        create_agent(AgentSpec("literal", {"model": "gpt-5"}, source="evals/x.eval.yaml:3"))


@pytest.mark.asyncio
async def test_a_single_step_guide_says_step_not_steps(sandbox: Sandbox, tmp_path: Path) -> None:
    result = await run_literal(sandbox, "```bash\ntrue\n```\n", tmp_path / "out")
    assert result.final_response == "Ran the one step."
