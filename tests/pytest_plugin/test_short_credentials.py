"""A credential too short to mask, given to ``copilot_eval`` or ``agent_eval``: refused naming the option
(one to three characters) or run with a warning (four to seven), as ``trialbook eval`` treats secrets."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

SHORT_KEYS = """
import pytest
from trialbook.agents import AgentSpec
from trialbook.agents.copilot import CopilotEval

def agent(key):
    provider = {"type": "openai", "base_url": "http://127.0.0.1:9/v1", "api_key": key}
    return CopilotEval(model="m", provider=provider, cli_path="/nonexistent/copilot")

@pytest.mark.asyncio
async def test_copilot_two_characters(copilot_eval, tmp_path):
    await copilot_eval(agent("ab"), "hi", workdir=tmp_path)
    raise AssertionError("ran with a key that cannot be masked")

@pytest.mark.asyncio
async def test_copilot_bearer_header_of_three(copilot_eval, tmp_path):
    config = agent("sk-long-enough-0123")
    config = CopilotEval(model="m", provider={**config.provider, "headers": {"Authorization": "Bearer xyz"}},
                         cli_path="/nonexistent/copilot")
    await copilot_eval(config, "hi", workdir=tmp_path)

@pytest.mark.asyncio
async def test_copilot_env_token_of_one(copilot_eval, tmp_path):
    env = {"GH_TOKEN": "x", "PATH": "/bin"}
    await copilot_eval(agent("sk-long-enough-0123"), "hi", workdir=tmp_path, env=env)

@pytest.mark.asyncio
async def test_copilot_five_characters_runs_with_a_warning(copilot_eval, tmp_path):
    result = await copilot_eval(agent("abcde"), "hi", workdir=tmp_path)
    assert result.stop_reason == "execution_error"  # no CLI here: it ran as far as it could

@pytest.mark.asyncio
async def test_agent_eval_option_of_two(agent_eval, tmp_path):
    spec = AgentSpec("shout", {"script": "true", "env": {"OPENAI_API_KEY": "ab"}})
    await agent_eval(spec, "go", workdir=tmp_path)
    raise AssertionError("ran with a key that cannot be masked")

@pytest.mark.asyncio
async def test_agent_eval_option_of_six_runs_with_a_warning(agent_eval, tmp_path):
    spec = AgentSpec("shout", {"script": "echo $OPENAI_API_KEY", "env": {"OPENAI_API_KEY": "abcdef"}})
    result = await agent_eval(spec, "go", workdir=tmp_path)
    assert result.success

@pytest.mark.asyncio
async def test_an_author_name_of_three_is_no_credential(agent_eval, tmp_path):
    spec = AgentSpec("shout", {"script": "true", "env": {"GIT_AUTHOR_NAME": "Ada", "AUTH_MODE": "on"}})
    assert (await agent_eval(spec, "go", workdir=tmp_path)).success
"""


def test_short_credentials_are_refused_naming_the_option_and_weak_ones_warn(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_short=SHORT_KEYS)
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    junit = pytester.path / "junit.xml"
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--trialbook-unsafe-local", f"--junitxml={junit}"
    )
    result.assert_outcomes(passed=3, failed=4)
    out = result.stdout.str()
    failures = {
        case.attrib["name"]: failure.attrib["message"]
        for case in ET.parse(junit).getroot().iter("testcase")
        for failure in case.iter("failure")
    }
    too_short = "too short to mask without masking ordinary text; use a value of at least 4"
    assert {
        test: (where in failures.get(test, ""), too_short in failures.get(test, ""))
        for test, where in [
            (
                "test_copilot_two_characters",
                "copilot_eval: CopilotEval provider.api_key is 2 characters long",
            ),
            (
                "test_copilot_bearer_header_of_three",
                "CopilotEval provider.headers.Authorization is 3 characters",
            ),
            ("test_copilot_env_token_of_one", "CopilotEval env.GH_TOKEN is 1 character long"),
            (
                "test_agent_eval_option_of_two",
                "agent_eval: shout option env.OPENAI_API_KEY is 2 characters long",
            ),
        ]
    } == dict.fromkeys(failures, (True, True)), failures
    assert "ran with a key that cannot be masked" not in out
    assert "Traceback" not in out and "During handling" not in out
    assert "CopilotEval provider.api_key is 5 characters long: any text containing its value" in out
    assert "shout option env.OPENAI_API_KEY is 6 characters long: any text containing its value" in out
    assert "GIT_AUTHOR_NAME" not in out
