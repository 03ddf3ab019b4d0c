"""CopilotResult on the real Copilot CLI: credentials masked everywhere, schemas as advertised, model
failures as execution errors."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from copilot import define_tool
from copilot.tools import ToolBinaryResult, ToolResult
from pydantic import BaseModel

from tests.fakes.openai_chat import ChatServer, Reply, call, position, text
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool
from trialbook.evidence import dump_result, load_result

from .conftest import MiniSandbox

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio(loop_scope="module")]


def agent(cli: str, server: ChatServer, pool: ServerPool, **options: object) -> CopilotAgent:
    config = CopilotEval(model="fake-model", provider=server.provider(), cli_path=cli, **options)  # type: ignore[arg-type]
    return CopilotAgent(config, environ={}, pool=pool)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file()}


async def test_the_provider_key_is_masked_in_the_result_and_every_file_written(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    holder: list[str] = []

    def script(body: dict[str, Any]) -> Reply:
        key = holder[0]
        n = position(body)
        replies = [
            call("bash", command=f"echo {key} > key.txt; cat key.txt", description=f"uses {key}"),
            text(f"the key is {key}"),
        ]
        return replies[min(n, 1)]

    with ChatServer(script) as server:
        holder.append(server.api_key)
        result = await agent(copilot_cli, server, shared_pool).run(sandbox.task("leak it", pkg_cache))
    assert result.success, result.error
    assert (sandbox.workdir / "key.txt").read_text().strip() == server.api_key, "the agent really saw it"
    saved = json.dumps(dump_result(result))
    assert server.api_key not in saved
    assert "***" in (result.final_response or "")
    [bash] = result.tool_calls_for("bash")
    assert server.api_key not in json.dumps(bash.arguments) and "***" in json.dumps(bash.arguments)
    assert load_result(json.loads(saved)) == result
    written = files_under(sandbox.root / "out")
    assert written, "events.jsonl was written"
    for path, data in written.items():
        assert server.api_key.encode() not in data, path


class Launch(BaseModel):
    command: str
    env: dict[str, str]
    auth_mode: str


async def test_a_tool_schema_is_recorded_as_advertised(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool
) -> None:
    tool = define_tool("launch", description="launches", handler=lambda p, _i: "ok", params_type=Launch)
    with ChatServer(
        [call("launch", command="run", env={"A": "1"}, auth_mode="none"), text("done")]
    ) as server:
        result = await agent(copilot_cli, server, shared_pool, tools=(tool,)).run(
            shared_box.task("launch", pkg_cache)
        )
        advertised = next(
            t["function"]["parameters"]
            for t in next(server.chat_requests())["tools"]
            if t["function"]["name"] == "launch"
        )
    assert result.success, result.error
    configuration: Any = result.configuration
    [recorded] = [t for t in configuration["tools"] if t["name"] == "launch"]
    parameters = recorded["parameters"]
    assert set(parameters["properties"]) == {"command", "env", "auth_mode"}
    assert sorted(parameters["required"]) == ["auth_mode", "command", "env"]
    assert set(advertised["properties"]) == set(parameters["properties"])
    assert load_result(dump_result(result)) == result


async def test_an_unreachable_model_is_an_execution_error(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool, closed_port: int
) -> None:
    provider = {"type": "openai", "base_url": f"http://127.0.0.1:{closed_port}/v1", "api_key": "sk-closed"}
    config = CopilotEval(model="fake-model", provider=provider, cli_path=copilot_cli)
    result = await CopilotAgent(config, environ={}, pool=shared_pool).run(
        sandbox.task("anyone there?", pkg_cache, timeout_s=120)
    )
    assert result.success is False
    assert result.stop_reason == "execution_error", (result.stop_reason, result.error)
    assert result.error is not None


async def test_an_agent_md_path_is_accepted_from_python(
    copilot_cli: str,
    pkg_cache: str,
    sandbox: MiniSandbox,
    shared_pool: ServerPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (sandbox.root / "agents").mkdir()
    (sandbox.root / "agents" / "checker.agent.md").write_text(
        "---\ndescription: checks\ntools: [bash]\n---\nYou check things.\n"
    )
    monkeypatch.chdir(sandbox.root)  # relative paths are read from the current directory

    def script(body: dict[str, Any]) -> Reply:
        n = position(body)
        if str(body["messages"][0]["content"]).startswith("You check things."):
            return [call("bash", command="echo child > child.txt", description="x"), text("child done")][n]
        steps = [
            call("task", description="c", prompt="check it", agent_type="checker", name="c1"),
            text("ok"),
        ]
        return steps[n]

    with ChatServer(script) as server:
        copilot = agent(copilot_cli, server, shared_pool, custom_agents=("agents/checker.agent.md",))
        assert copilot.config.agent_definitions[0]["name"] == "checker"
        result = await copilot.run(sandbox.task("delegate", pkg_cache))
    assert result.success, result.error
    [invocation] = result.subagent_invocations
    assert invocation.name == "checker" and invocation.result is not None
    assert invocation.result.final_response == "child done"


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"first"
JPEG = bytes.fromhex("ffd8ffe000104a464946") + b"second"


def two_images(_params: Numbers, _invocation: object) -> ToolResult:
    return ToolResult(
        text_result_for_llm="two pictures",
        binary_results_for_llm=[
            ToolBinaryResult(data=base64.b64encode(PNG).decode(), mime_type="image/png", type="image"),
            ToolBinaryResult(data=base64.b64encode(JPEG).decode(), mime_type="image/jpeg", type="image"),
        ],
    )


class Numbers(BaseModel):
    x: int


async def test_two_images_from_one_tool_call_round_trip_in_order(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    tool = define_tool("snap", description="takes pictures", handler=two_images, params_type=Numbers)
    with ChatServer([call("snap", x=1), text("saw them")]) as server:
        result = await agent(copilot_cli, server, shared_pool, tools=(tool,)).run(
            sandbox.task("take pictures", pkg_cache)
        )
    assert result.success, result.error
    [snap] = result.tool_calls_for("snap")
    assert (snap.image_content, snap.image_media_type) == (PNG, "image/png")
    assert [(i.content, i.media_type) for i in snap.additional_images] == [(JPEG, "image/jpeg")]
    assert snap.result == "two pictures" and snap.evidence_complete
    assert load_result(json.loads(json.dumps(dump_result(result)))) == result


def one_unreadable_image(_params: Numbers, _invocation: object) -> ToolResult:
    return ToolResult(
        text_result_for_llm="two pictures, one broken",
        binary_results_for_llm=[
            ToolBinaryResult(data=base64.b64encode(PNG).decode(), mime_type="image/png", type="image"),
            ToolBinaryResult(data="this is not base64!", mime_type="image/jpeg", type="image"),
        ],
    )


async def test_an_image_whose_data_does_not_decode_leaves_the_evidence_incomplete(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    tool = define_tool(
        "snap", description="takes pictures", handler=one_unreadable_image, params_type=Numbers
    )
    with ChatServer([call("snap", x=1), text("saw one")]) as server:
        result = await agent(copilot_cli, server, shared_pool, tools=(tool,)).run(
            sandbox.task("take pictures", pkg_cache)
        )
    [snap] = result.tool_calls_for("snap")
    assert (snap.image_content, snap.additional_images) == (PNG, ())
    gap = f"tool call {snap.call_id} (snap): image result.binaryResultsForLlm[1] has no valid base64 data"
    assert [error for error in result.capture_errors if error.startswith(gap)] != [], result.capture_errors
    assert result.evidence_complete is False
    reloaded = load_result(json.loads(json.dumps(dump_result(result))))
    assert reloaded == result and reloaded.evidence_complete is False


async def test_personas_and_extra_config_show_in_the_snapshot_and_the_system_prompt(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox, shared_pool: ServerPool
) -> None:
    with ChatServer([text("hi")]) as server:
        copilot = agent(
            copilot_cli,
            server,
            shared_pool,
            instructions="Keep changes small.",
            personas=("You are helping a first-time contributor.",),
            extra_config={"reasoning_effort": "low"},
        )
        result = await copilot.run(sandbox.task("hello", pkg_cache))
        [first] = list(server.chat_requests())[:1]
    assert result.success, result.error
    expected = "Keep changes small.\n\nYou are helping a first-time contributor."
    assert result.effective_system_prompt == expected
    sent = "\n".join(str(m["content"]) for m in first["messages"] if m["role"] == "system")
    assert expected in sent, "the supplied system prompt really went out"
    configuration: Any = result.configuration
    assert configuration["personas"] == ["You are helping a first-time contributor."]
    assert configuration["reasoning_effort"] == "low"
    assert configuration["system_message"] == {"mode": "append", "content": expected}
    assert load_result(dump_result(result)) == result
