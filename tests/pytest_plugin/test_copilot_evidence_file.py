"""``pytest --trialbook-evidence`` with ``copilot_eval`` on the real Copilot CLI: the saved suite keeps
child results, request audit and skill discovery, and loads strictly."""

from __future__ import annotations

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


@pytest.mark.real_cli
def test_saved_suite_holds_child_results_audit_and_skill_discovery(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = CACHE / "copilot-pkg"
    cache.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("TEST_COPILOT_CLI", str(ensure_cli("@github/copilot")))
    monkeypatch.setenv("TEST_COPILOT_PKG_CACHE", str(cache))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    pytester.makepyfile(test_inner=INNER_TEST)
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    out = pytester.path / "evidence.json"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--trialbook-unsafe-local", f"--trialbook-evidence={out}"
    )
    result.assert_outcomes(passed=1)

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
