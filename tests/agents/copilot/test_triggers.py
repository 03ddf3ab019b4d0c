"""A trigger eval with the real Copilot CLI: the skill tool call is the evidence that the skill was used."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_chat import ChatServer, Reply, call, position, text

from ...runner.conftest import Invoke, invoke

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

PROVIDER_KEY = "sk-provider-fake-" + "6f" * 20
USES_SKILL = ("Deploy the starter app to staging", "Explain how our deploy script works")


def _model(body: dict[str, Any]) -> Reply:
    """Calls the skill tool first when the user asked one of ``USES_SKILL``, then answers."""
    asked = json.dumps([m for m in body.get("messages", []) if m.get("role") == "user"])
    if position(body) == 0 and any(query in asked for query in USES_SKILL):
        return call("skill", skill="deploy")
    return text("Done.")


def test_copilot_skill_tool_calls_give_the_scripted_confusion_table(
    invoke: Invoke, tmp_path: Path, copilot_cli: str, pkg_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    skill = tmp_path / "skills/deploy/SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Deploys the app with acme.\n---\nRun acme deploy.\n")
    with ChatServer(_model) as server:
        (tmp_path / "evals").mkdir()
        (tmp_path / "evals/deploy.eval.yaml").write_text(
            textwrap.dedent(
                f"""\
                secrets: [FAKE_PROVIDER_KEY]
                skills: [../skills/deploy]
                agents:
                  - name: copilot
                    cli_path: {copilot_cli}
                    model: fake-model
                    provider:
                      type: openai
                      base_url: "{server.base_url}"
                      api_key: "{{{{ secrets.FAKE_PROVIDER_KEY }}}}"
                    env: {{COPILOT_PKG_CACHE_HOME: {pkg_cache}}}
                timeout: 90s
                triggers:
                  skill: deploy
                  min_precision: 0.9
                  queries:
                    - {{query: "Deploy the starter app to staging", expect: should}}
                    - {{query: "Put this build on production", expect: should}}
                    - {{query: "Explain how our deploy script works", expect: should_not}}
                    - {{query: "Run the unit tests", expect: should_not}}
                """
            )
        )
        result = invoke("eval", "evals", "--concurrency", "1", env={"FAKE_PROVIDER_KEY": PROVIDER_KEY})
    # Precision 0.5 is below 0.9: the eval fails, and the table is exactly what the model was told to do.
    assert result.exit_code == 1, result.output
    assert "recall 0.50 (1/2) · precision 0.50 (1/2)" in result.output, result.output
    [group] = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())["triggers"]
    assert group["score"]["confusion"] == {"tp": 1, "fn": 1, "fp": 1, "tn": 1}
    actual = sorted(
        json.loads(path.read_text())["assertions"][0]["actual"]
        for path in (tmp_path / ".trialbook/runs/latest").glob("evals/deploy/*/copilot/trial-1/result.json")
    )
    assert sum(text.startswith("tool call skill ") for text in actual) == 2, actual
