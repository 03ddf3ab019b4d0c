"""The pytest starter ``trialbook init --pytest`` writes: a Copilot eval that passes offline.

It shows the three things a first plugin test needs: ``copilot_eval`` driving the real Copilot CLI, the
``loopback_model`` fixture standing in for a model API, and a custom tool whose result is an MCP-style
string (display text, then a JSON line ``{"result": ...}``) that the test parses both ways and checks for
agreement. docs/pytest-starter.md walks through it.
"""

from __future__ import annotations

__all__ = ["STARTER", "STARTER_NAME"]

STARTER_NAME = "test_copilot_starter.py"

STARTER = '''\
"""A first trialbook test: a Copilot session against a scripted loopback model, with a custom tool.

Run it with:  pytest --trialbook-unsafe-local   (in CI, CI=true allows it without the flag)
It needs:     pip install 'trialbook[pytest]'  and the Copilot CLI (npm install -g @github/copilot),
              found through COPILOT_CLI_PATH or on PATH. No token and no network: the model is local.
Walkthrough:  docs/pytest-starter.md in the trialbook documentation
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest
from copilot import define_tool
from pydantic import BaseModel

from trialbook.agents.copilot import CopilotEval
from trialbook.testing import call, text


class City(BaseModel):
    city: str


def lookup_weather(params: City, invocation: Any) -> str:
    """An MCP-style string result: text for people, then one JSON line for programs."""
    data = {"city": params.city, "temperature_c": 21}
    return f"Weather in {params.city}: {data['temperature_c']} °C\\n" + json.dumps({"result": data})


def parse_tool_result(result: str) -> tuple[str, Any]:
    """Split an MCP-style result into its display text and the value under ``result``."""
    display, _, last = result.rstrip().rpartition("\\n")
    return display.strip(), json.loads(last)["result"]


weather_tool = define_tool(
    "lookup_weather", description="Current weather for a city", handler=lookup_weather, params_type=City
)


def copilot_cli() -> str:
    found = os.environ.get("COPILOT_CLI_PATH") or shutil.which("copilot")
    if found is None:
        pytest.fail("the Copilot CLI is needed: npm install -g @github/copilot, or set COPILOT_CLI_PATH")
    return found


@pytest.mark.asyncio
async def test_the_weather_tool_result_agrees_with_itself(copilot_eval, loopback_model, tmp_path):
    # The model's side of the conversation, scripted: call the tool, then answer.
    model = loopback_model([call("lookup_weather", city="Oslo"), text("It is 21 °C in Oslo.")])
    agent = CopilotEval(
        model="loopback-model", provider=model.provider(), cli_path=copilot_cli(), tools=(weather_tool,)
    )
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path / "home")}
    if "COPILOT_PKG_CACHE_HOME" in os.environ:  # reuse the CLI's unpacked runtime between tests
        env["COPILOT_PKG_CACHE_HOME"] = os.environ["COPILOT_PKG_CACHE_HOME"]

    result = await copilot_eval(agent, "What is the weather in Oslo?", workdir=tmp_path, env=env)

    assert result.success, result.error  # the session ran to the end
    assert result.evidence_complete, result.capture_errors  # and its record can be trusted
    [weather] = result.tool_calls_for("lookup_weather")
    assert weather.arguments == {"city": "Oslo"}
    display, value = parse_tool_result(weather.result)
    assert value == {"city": "Oslo", "temperature_c": 21}
    # Both halves of the result must say the same thing.
    assert display == f"Weather in {value['city']}: {value['temperature_c']} °C"
    assert result.final_response == "It is 21 °C in Oslo."
'''
