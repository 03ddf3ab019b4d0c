"""``pytest --trialbook-evidence`` with ``copilot_eval`` on the real Copilot CLI: the saved suite keeps
child results, request audit, skill discovery and tool images, loads strictly, and no file the plugin
writes holds a credential the session was given."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.clis import CACHE, ensure_cli
from trialbook.evidence import CopilotResult, load_suite

ROOT = Path(__file__).resolve().parents[2]

INNER_TEST = """
import os

import pytest

from tests.fakes.openai_chat import ChatServer, call, position, text
from trialbook.agents.copilot import CopilotEval

CHECKER = {"name": "checker", "description": "checks", "prompt": "You check things.", "tools": ["bash"]}


def script(body):
    n = position(body)
    if str(body["messages"][0]["content"]).startswith("You check things."):
        return [call("bash", command="echo child > child.txt", description="x"), text("child done")][n]
    return [call("task", description="check", prompt="check it", agent_type="checker", name="c1"),
            text("parent done")][n]


@pytest.mark.asyncio
async def test_delegates_to_a_checker(copilot_eval, tmp_path, record_property):
    skill = tmp_path / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\\nname: greet\\ndescription: Greets\\n---\\nSay hi.\\n")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "COPILOT_PKG_CACHE_HOME": os.environ["TEST_COPILOT_PKG_CACHE"],
    }
    with ChatServer(script) as server:
        agent = CopilotEval(
            model="fake-model",
            provider=server.provider(),
            cli_path=os.environ["TEST_COPILOT_CLI"],
            working_directory=str(tmp_path),
            custom_agents=(CHECKER,),
            skill_directories=(str(tmp_path / "skills"),),
            audit_requests=True,
        )
        result = await copilot_eval(agent, "delegate the check", env=env)
    assert result.success, result.error
    assert (tmp_path / "child.txt").exists()
    record_property("checked", True)
"""


def run_inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, source: str, **env: str) -> Path:
    """Run ``source`` as a test module with ``copilot_eval`` on the real CLI; answer its evidence file."""
    cache = CACHE / "copilot-pkg"
    cache.mkdir(parents=True, exist_ok=True)
    env |= {"TEST_COPILOT_CLI": str(ensure_cli("@github/copilot")), "TEST_COPILOT_PKG_CACHE": str(cache)}
    for name, value in {**env, "PYTHONPATH": str(ROOT)}.items():
        monkeypatch.setenv(name, value)
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_inner=source)
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    out = pytester.path / "evidence.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--trialbook-unsafe-local", f"--trialbook-evidence={out}"
    )
    result.assert_outcomes(passed=1)
    return out


@pytest.mark.real_cli
def test_saved_suite_holds_child_results_audit_and_skill_discovery(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = run_inner(pytester, monkeypatch, INNER_TEST)
    suite = load_suite(out)
    (test,) = suite.tests
    assert test.outcome == "passed"
    assert test.properties == {"checked": True}
    (execution,) = test.executions
    parent = execution.result
    assert isinstance(parent, CopilotResult)
    (invocation,) = parent.subagent_invocations
    assert invocation.name == "checker"
    assert invocation.status == "completed"
    child = invocation.result
    assert isinstance(child, CopilotResult)
    assert child.final_response == "child done"
    assert [call.name for call in child.all_tool_calls] == ["bash"]
    # Two requests each, 100 input tokens a request in the fake: the tree is counted once, child included.
    assert (len(parent.usage), len(child.usage)) == (2, 2)
    assert parent.total_input_tokens == 400
    assert len(parent.request_audit) == 2
    assert all(record.model == "fake-model" for record in parent.request_audit)
    assert all(record.instructions_sha256 for record in parent.request_audit)
    assert parent.skill_discovery is not None
    assert parent.skill_discovery.complete
    assert [skill.name for skill in parent.skill_discovery.skills] == ["greet"]


LEAKY_TEST = """
import base64
import os

import pytest
from copilot import define_tool
from copilot.tools import ToolBinaryResult, ToolResult
from pydantic import BaseModel

from trialbook.agents.copilot import CopilotEval
from trialbook.testing import ChatServer, call, text

KEY = os.environ["TEST_PROVIDER_KEY"]
HEADER = os.environ["TEST_HEADER_SECRET"]
PNG, JPEG = (bytes.fromhex(os.environ[name]) for name in ("TEST_PNG", "TEST_JPEG"))


class Numbers(BaseModel):
    x: int


def snap(params, invocation):
    return ToolResult(
        text_result_for_llm=f"two pictures for {KEY}",
        binary_results_for_llm=[
            ToolBinaryResult(data=base64.b64encode(PNG).decode(), mime_type="image/png", type="image"),
            ToolBinaryResult(data=base64.b64encode(JPEG).decode(), mime_type="image/jpeg", type="image"),
        ],
    )


@pytest.mark.asyncio
async def test_leaks_both_and_takes_pictures(copilot_eval, tmp_path):
    script = [
        call("snap", x=1),
        call("bash", command=f"echo {KEY} {HEADER}", description=f"uses {KEY}"),
        text(f"the key is {KEY} and the header {HEADER}"),
    ]
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "COPILOT_PKG_CACHE_HOME": os.environ["TEST_COPILOT_PKG_CACHE"],
    }
    tool = define_tool("snap", description="takes pictures", handler=snap, params_type=Numbers)
    with ChatServer(script, api_key=KEY) as server:
        provider = {**server.provider(), "headers": {"X-Api-Key": HEADER}}
        agent = CopilotEval(
            model="fake-model",
            provider=provider,
            cli_path=os.environ["TEST_COPILOT_CLI"],
            working_directory=str(tmp_path),
            tools=(tool,),
        )
        result = await copilot_eval(agent, "leak them", env=env)
    assert result.success, result.error
    assert "***" in result.final_response
"""

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452") + b"first"
JPEG = bytes.fromhex("ffd8ffe000104a464946") + b"second"


@pytest.mark.real_cli
def test_the_evidence_file_has_both_images_and_no_credential_in_any_file_the_plugin_writes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    key, header = "sk-plugin-" + secrets.token_hex(16), "hdr-plugin-" + secrets.token_hex(16)
    secret = {"TEST_PROVIDER_KEY": key, "TEST_HEADER_SECRET": header}
    out = run_inner(pytester, monkeypatch, LEAKY_TEST, **secret, TEST_PNG=PNG.hex(), TEST_JPEG=JPEG.hex())
    (test,) = load_suite(out).tests
    (execution,) = test.executions
    copilot = execution.result
    assert isinstance(copilot, CopilotResult)
    [snap] = copilot.tool_calls_for("snap")
    assert (snap.image_content, snap.image_media_type) == (PNG, "image/png")
    assert [(i.content, i.media_type) for i in snap.additional_images] == [(JPEG, "image/jpeg")]
    [bash] = copilot.tool_calls_for("bash")
    assert bash.arguments == {"command": "echo *** ***", "description": "uses ***"}, "it arrived, masked"
    # Every file under the session's folders: the evidence file, the plugin's copilot-out folders with
    # events.jsonl, the test's tmp_path. Only the CLI's own HOME is left out: the plugin writes nothing there.
    written = [
        path
        for path in pytester.path.rglob("*")
        if path.is_file() and "home" not in path.relative_to(pytester.path).parts
    ]
    assert out in written and any(path.name == "events.jsonl" for path in written)
    for path in written:
        data = path.read_bytes()
        assert key.encode() not in data and header.encode() not in data, path
