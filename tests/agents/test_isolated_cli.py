"""The real Claude Code and Codex CLIs under `isolation: bwrap`, against the loopback model.

The CLIs are installed under the runner's home (the tests' npm cache), which isolation hides: their own
installation stays visible read-only, so they run as usual while the rest of the home stays out of reach.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell
from tests.system import ensure

from ..runner.conftest import Invoke, invoke

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

ANTHROPIC_KEY = "sk-ant-fake-" + "e5" * 20
CODEX_KEY = "sk-fake-codex-" + "f6" * 20


def _eval(tmp_path: Path, server: ModelServer, claude: Path, codex: Path, network: str) -> None:
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / "evals/hi.eval.yaml").write_text(
        "prompt_text: Write hi.txt.\n"
        "secrets: [FAKE_ANTHROPIC_KEY, FAKE_CODEX_KEY]\n"
        "negative_control: false\n"
        f"sandbox: {{isolation: bwrap, network: {network}}}\n"
        "agents:\n"
        f"  - {{name: claude-code, binary: {claude}, model: sonnet,\n"
        "     env: {ANTHROPIC_API_KEY: '{{ secrets.FAKE_ANTHROPIC_KEY }}',\n"
        f"           ANTHROPIC_BASE_URL: {server.url}}}}}\n"
        f"  - {{name: codex, binary: {codex}, model: gpt-5.5, base_url: {server.openai_url},\n"
        "     env: {CODEX_API_KEY: '{{ secrets.FAKE_CODEX_KEY }}'}}\n"
        "assert: [file_exists: hi.txt]\n"
        "timeout: 3m\n"
    )


KEYS = {"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY, "FAKE_CODEX_KEY": CODEX_KEY}


@pytest.mark.parametrize("network", ["host", "model"])
def test_claude_code_and_codex_run_under_bwrap(
    invoke: Invoke, tmp_path: Path, no_model_credentials: None, network: str
) -> None:
    ensure("bubblewrap")
    claude, codex = ensure_cli("@anthropic-ai/claude-code"), ensure_cli("@openai/codex")
    with ModelServer([shell("echo hi > hi.txt"), say("Done.")]) as server:
        _eval(tmp_path, server, claude, codex, network)
        result = invoke("eval", "evals", env=KEYS)
    assert result.exit_code == 0, result.output
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    assert {test["id"]: test["outcome"] for test in suite["tests"]} == {
        "hi::claude-code": "passed",
        "hi::codex": "passed",
    }
    assert {test["properties"]["sandbox"]["isolation"] for test in suite["tests"]} == {"bwrap"}
    for test in suite["tests"]:
        refused = test["executions"][0]["result"].get("network_refused")
        # host: nothing watched; model: the model server was reached, and whatever else was tried is listed
        assert refused is None if network == "host" else isinstance(refused, list)


def test_with_network_none_the_clis_fail_naming_the_refused_model_endpoint(
    invoke: Invoke, tmp_path: Path, no_model_credentials: None
) -> None:
    ensure("bubblewrap")
    claude, codex = ensure_cli("@anthropic-ai/claude-code"), ensure_cli("@openai/codex")
    with ModelServer([shell("echo hi > hi.txt"), say("Done.")]) as server:
        _eval(tmp_path, server, claude, codex, "none")
        result = invoke("eval", "evals", env=KEYS)
        port = server.url.rsplit(":", 1)[1].strip("/")
    assert result.exit_code == 1, result.output
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    for test in suite["tests"]:
        outcome = test["executions"][0]["result"]
        assert test["outcome"] != "passed", test["id"]
        assert {"host": "127.0.0.1", "port": int(port)} in outcome["network_refused"], test["id"]
        said = outcome["error"].split("; network: none refused the trial's connections to ")
        assert len(said) == 2 and f"127.0.0.1:{port}" in said[1].split(", "), outcome["error"]
    shown = [line for line in result.output.splitlines() if line.strip().startswith("network refused")]
    assert len(shown) == 2 and all(f"127.0.0.1:{port}" in line for line in shown), result.output
