"""``trialbook init --pytest`` writes a starter that passes as generated, on the real Copilot CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clis import CACHE, ensure_cli
from trialbook.evidence import load_suite

TRIALBOOK = str(Path(sys.executable).with_name("trialbook"))


@pytest.mark.real_cli
def test_the_generated_starter_passes_as_generated(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    made = subprocess.run(
        [TRIALBOOK, "init", "--pytest"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    starter = project / "tests" / "test_copilot_starter.py"
    assert f"wrote {Path('tests') / 'test_copilot_starter.py'}" in made.stdout
    (project / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    (CACHE / "copilot-pkg").mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": str(tmp_path / "home"),
        "COPILOT_CLI_PATH": str(ensure_cli("@github/copilot")),
        "COPILOT_PKG_CACHE_HOME": str(CACHE / "copilot-pkg"),
    }
    out = project / "evidence.json"

    def pytest_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--trialbook-unsafe-local", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )

    ran = pytest_run(f"--trialbook-evidence={out}", str(starter))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout
    # What passed is the real thing: a copilot_eval execution whose tool returned an MCP-style string.
    (test,) = load_suite(out).tests
    (execution,) = test.executions
    [weather] = execution.result.all_tool_calls
    assert weather.name == "lookup_weather" and weather.arguments == {"city": "Oslo"}
    assert weather.result is not None
    display, _, payload = weather.result.rstrip().rpartition("\n")
    assert display == "Weather in Oslo: 21 °C"
    assert json.loads(payload) == {"result": {"city": "Oslo", "temperature_c": 21}}

    # Its agreement check bites: a tool whose display text drifts from its JSON fails the starter.
    source = starter.read_text()
    drift = "{data['temperature_c']} °C\\n\""
    assert source.count(drift) == 1, "the starter's tool writes the display text this way"
    starter.write_text(source.replace(drift, "{data['temperature_c'] + 1} °C\\n\""))
    drifted = pytest_run(str(starter))
    assert drifted.returncode == 1 and "1 failed" in drifted.stdout, drifted.stdout + drifted.stderr
    assert "Weather in Oslo: 22 °C" in drifted.stdout, "it failed on the disagreement, nothing else"
    starter.write_text(source)
    again = subprocess.run(
        [TRIALBOOK, "init", "--pytest"],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 2 and "--force" in again.stderr, "an existing starter is never overwritten"
