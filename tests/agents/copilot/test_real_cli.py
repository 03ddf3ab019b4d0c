"""The copilot agent driving the real Copilot CLI (npm, pinned) against a loopback chat-completions fake."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from copilot import define_tool
from pydantic import BaseModel

from tests.fakes.openai_chat import ChatServer, Reply, call, position, text
from trialbook.agents import AgentSpec, AgentTask
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool, create
from trialbook.evidence import JsonValue, dump_result, load_result
from trialbook.sandbox import ShimConfig, create_sandbox

from .conftest import MiniSandbox

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio(loop_scope="module")]


def agent(cli: str, server: ChatServer, pool: ServerPool, **options: object) -> CopilotAgent:
    config = CopilotEval(model="fake-model", provider=server.provider(), cli_path=cli, **options)  # type: ignore[arg-type]
    return CopilotAgent(config, environ={}, pool=pool)


async def test_bash_call_writes_in_the_sandbox_and_shows_in_the_shim_log(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    sandbox.shim("deploytool")
    script = [
        call("bash", command="echo made > made.txt && deploytool --prod", description="x"),
        text("done"),
    ]
    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool)
        result = await copilot.run(sandbox.task("make the file", pkg_cache))
    assert result.success, result.error
    assert result.stop_reason == "completed"
    assert (sandbox.workdir / "made.txt").read_text() == "made\n"
    assert sandbox.log.read_text() == "deploytool --prod\n"
    [bash] = result.tool_calls_for("bash")
    assert bash.completion_received is True and bash.success is True and bash.evidence_complete
    assert result.evidence_complete and result.capture_errors == ()
    assert result.final_response == "done"
    assert result.model_used == "fake-model"
    assert [u.input_tokens for u in result.usage] == [100, 100]
    assert result.tool_calls_admitted == 1
    assert result.permission_requested is True
    assert result.agent_version == "1.0.102"
    assert result.configuration is not None and "api_key" not in str(result.configuration)
    assert server.api_key not in (sandbox.root / "out" / "events.jsonl").read_text()


async def test_an_eval_file_entry_runs_through_create(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, no_tokens: dict[str, str]
) -> None:
    with ChatServer([text("hello from the fake")]) as server:
        spec = AgentSpec(
            "copilot",
            {
                "model": "fake-model",
                "provider": server.provider(),
                "cli_path": copilot_cli,
                "timeout_s": "60s",
            },
            source="evals/demo.eval.yaml",
        )
        copilot = create(spec)
        try:
            assert copilot.available().ok
            result = await copilot.run(sandbox.task("say hello", pkg_cache))
        finally:
            await copilot.aclose()
    assert result.success, result.error
    assert result.final_response == "hello from the fake"


class Numbers(BaseModel):
    x: int


def add_one(params: Numbers) -> str:
    return str(params.x + 1)


async def hang_forever(params: Numbers) -> str:
    await asyncio.sleep(3600)
    return "never"


async def test_a_python_tool_runs_in_this_process(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    tool = define_tool(
        "add_one", description="adds one", handler=lambda p, _inv: add_one(p), params_type=Numbers
    )
    with ChatServer([call("add_one", x=41), text("it is 42")]) as server:
        copilot = agent(copilot_cli, server, shared_pool, tools=(tool,))
        result = await copilot.run(shared_box.task("add", pkg_cache))
    assert result.success, result.error
    [record] = result.tool_calls_for("add_one")
    assert record.result == "42" and record.success is True
    assert result.tool_was_called_with("add_one", x=41)
    assert result.configuration is not None
    tools = result.configuration["tools"]
    assert isinstance(tools, list) and isinstance(tools[0], dict) and tools[0]["name"] == "add_one"
    assert "handler" not in json.dumps(tools)


async def test_a_denied_permission_fails_the_tool_not_the_session(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    script = [call("bash", command="echo no > denied.txt", description="x"), text("could not")]
    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool, deny_permissions=("shell",))
        result = await copilot.run(shared_box.task("try", pkg_cache))
    assert result.success, result.error
    assert result.permission_requested is True
    [bash] = result.tool_calls_for("bash")
    assert bash.success is False and bash.error is not None and "rejected" in bash.error
    assert not (shared_box.workdir / "denied.txt").exists()


async def test_the_tool_budget_denies_the_call_past_it_and_stops_the_run(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    script = [
        call("bash", command="echo 1 > one.txt", description="x"),
        call("bash", command="echo 2 > two.txt", description="x"),
        call("bash", command="echo 3 > three.txt", description="x"),
        text("done"),
    ]
    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool, tool_call_budget=1)
        result = await copilot.run(shared_box.task("go", pkg_cache))
    assert result.stop_reason == "tool_budget_exceeded"
    assert result.success is False and result.error is not None and "budget" in result.error
    assert result.tool_calls_admitted == 1
    assert (shared_box.workdir / "one.txt").exists() and not (shared_box.workdir / "two.txt").exists()
    denied = result.all_tool_calls[1]
    assert denied.success is False and denied.completion_received is True
    assert not (shared_box.workdir / "three.txt").exists()


async def test_a_subagent_gets_its_own_child_result(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    def script(body: dict[str, Any]) -> Reply:
        system = str(body["messages"][0]["content"])
        n = position(body)
        if system.startswith("You check things."):  # the subagent's own conversation
            return [call("bash", command="echo child > child.txt", description="x"), text("child done")][n]
        steps = [
            call("task", description="check", prompt="check it", agent_type="checker", name="checker1"),
            text("parent done"),
        ]
        return steps[n]

    checker = {"name": "checker", "description": "checks", "prompt": "You check things.", "tools": ["bash"]}
    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool, custom_agents=(checker,))
        result = await copilot.run(shared_box.task("delegate", pkg_cache))
    assert result.success, result.error
    [invocation] = result.subagent_invocations
    assert invocation.name == "checker" and invocation.status == "completed"
    child = invocation.result
    assert child is not None and child.final_response == "child done"
    assert [c.name for c in child.all_tool_calls] == ["bash"]
    assert [c.name for c in result.all_tool_calls] == ["task"]  # the parent's calls stay session-local
    assert len(result.usage) == 2 and len(child.usage) == 2
    assert result.total_input_tokens == 400  # the tree, each request once
    assert result.execution_results() == (result, child)
    assert (shared_box.workdir / "child.txt").exists()


async def test_a_skill_in_an_explicit_directory_is_discovered_before_the_prompt(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool, tmp_path: Path
) -> None:
    (tmp_path / "skills" / "greet").mkdir(parents=True)
    (tmp_path / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greets\n---\nSay hi.\n"
    )
    with ChatServer([call("skill", skill="greet"), text("hi")]) as server:
        copilot = agent(copilot_cli, server, shared_pool, skill_directories=(str(tmp_path / "skills"),))
        result = await copilot.run(shared_box.task("greet me", pkg_cache))
    assert result.success, result.error
    discovery = result.skill_discovery
    assert discovery is not None and discovery.complete and discovery.errors == ()
    [skill] = discovery.skills
    assert (skill.name, skill.source, skill.enabled, skill.description) == ("greet", "custom", True, "Greets")
    assert skill.plugin_name is None and skill.argument_hint is None
    assert result.tool_was_called_with("skill", skill="greet")


async def test_an_unexpectedly_disabled_skill_stops_before_any_model_request(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool, tmp_path: Path
) -> None:
    (tmp_path / "skills" / "greet").mkdir(parents=True)
    (tmp_path / "skills" / "greet" / "SKILL.md").write_text(
        "---\nname: greet\ndescription: Greets\n---\nHi.\n"
    )
    (tmp_path / "skills" / "ghost").mkdir()
    (tmp_path / "skills" / "ghost" / "SKILL.md").write_text("---\nname: ghost\ndescription: Boo\n---\nBoo.\n")
    with ChatServer([text("should never be asked")]) as server:
        copilot = agent(
            copilot_cli,
            server,
            shared_pool,
            skill_directories=(str(tmp_path / "skills"),),
            disabled_skills=("ghost",),
        )
        ok = await copilot.run(shared_box.task("greet me", pkg_cache))
        assert ok.success, ok.error  # a skill disabled on purpose is fine
        (tmp_path / "skills" / "ghost" / "SKILL.md").unlink()
        (tmp_path / "skills" / "nested").mkdir()
        before = len(server.requests)
        blocked = await agent(
            copilot_cli,
            server,
            shared_pool,
            skill_directories=(str(tmp_path / "skills"), str(tmp_path / "missing")),
        ).run(shared_box.task("greet me", pkg_cache))
        assert len(server.requests) == before
    assert blocked.success is False and blocked.stop_reason == "execution_error"
    assert blocked.skill_discovery is not None and blocked.skill_discovery.complete
    assert any("does not exist" in e for e in blocked.skill_discovery.errors)
    assert any("no SKILL.md" in w for w in blocked.skill_discovery.warnings)
    assert blocked.error is not None and "skill check failed" in blocked.error


async def test_request_audit_records_each_outgoing_request(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    script = [call("bash", command="true", description="x"), text("done")]
    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool, audit_requests=True, instructions="Be brief.")
        result = await copilot.run(shared_box.task("audit me", pkg_cache))
    assert result.success, result.error
    assert len(result.request_audit) == len(server.requests) == 2
    first = result.request_audit[0]
    sent = server.requests[0]
    system = "\n\n".join(m["content"] for m in sent["messages"] if m["role"] in ("system", "developer"))
    assert first.instructions_sha256 == hashlib.sha256(system.encode()).hexdigest()
    assert "Be brief." in system
    assert first.model == "fake-model" and "bash" in first.tool_names
    assert first.tool_names == tuple(t["function"]["name"] for t in sent["tools"])
    assert first.image_count == 0 and first.reasoning_effort is None


async def test_a_tool_call_that_never_completes_is_a_visible_gap(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    tool = define_tool(
        "wait", description="waits", handler=lambda p, _inv: hang_forever(p), params_type=Numbers
    )
    with ChatServer([call("wait", call_id="call_wait", x=1), text("never reached")]) as server:
        copilot = agent(copilot_cli, server, shared_pool, tools=(tool,), timeout_s=3)
        result = await copilot.run(shared_box.task("wait", pkg_cache))
    assert result.stop_reason == "timeout"
    assert result.success is False and result.error is not None and "timed out" in result.error
    assert result.evidence_complete is False
    [pending] = result.all_tool_calls
    assert pending.call_id == "call_wait" and pending.completion_received is False and pending.result is None
    assert any("call_wait" in e for e in result.capture_errors)


async def test_a_trialbook_sandbox_sees_every_call_and_the_result_round_trips(
    copilot_cli: str, pkg_cache: str, tmp_path: Path, no_tokens: dict[str, str]
) -> None:
    shims = [ShimConfig("vendorctl", "stub", "echo vendor ok")]
    with create_sandbox(
        root=tmp_path, template=None, shims=shims, secrets={}, extra_env={"COPILOT_PKG_CACHE_HOME": pkg_cache}
    ) as box:
        script = [
            call("bash", command="vendorctl init --project demo > out.txt", description="x"),
            text("ok"),
        ]
        with ChatServer(script) as server:
            options: dict[str, JsonValue] = {
                "model": "fake-model",
                "provider": server.provider(),
                "cli_path": copilot_cli,
            }
            copilot = create(AgentSpec("copilot", options, source=str(tmp_path / "x.eval.yaml")))
            task = AgentTask(
                prompt="init", workdir=box.workdir, home=box.home, env=box.env, output_dir=tmp_path / "out"
            )
            try:
                result = await copilot.run(task)
            finally:
                await copilot.aclose()
        assert result.success, result.error
        assert [c.line for c in box.read_calls()] == ["vendorctl init --project demo"]
        assert (box.workdir / "out.txt").read_text() == "vendor ok\n"
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result
