"""``compare: without`` with the real Codex CLI against a loopback model, audited (``audit_requests``).

The obeying fake answers a request that carries the instruction file's marker with "create the file",
and any other request with "nothing to do": the with arm passes every trial and the without arm none,
decided by what the real CLI actually sent. The ignoring fake creates the file either way: no difference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

CODEX_KEY = "sk-fake-codex-" + "d4" * 20
MARKER = "trialbook-marker-5c1e"


def _run(invoke: Invoke, tmp_path: Path, server: ModelServer, codex: Path) -> tuple[Any, list[bool]]:
    write(
        tmp_path / "evals/rules.eval.yaml",
        f"""
        prompt_text: Follow the project's rules.
        instructions: [../AGENTS.md]
        secrets: [FAKE_CODEX_KEY]
        agents:
          - name: codex
            binary: {codex}
            model: gpt-5.5
            base_url: {server.openai_url}
            audit_requests: true
            env:
              CODEX_API_KEY: "{{{{ secrets.FAKE_CODEX_KEY }}}}"
        trials: 4
        compare: without
        assert:
          - file_exists: done
        """,
    )
    result = invoke("eval", "evals", "--json", env={"FAKE_CODEX_KEY": CODEX_KEY})
    assert result.exit_code == 0, result.output
    (compared,) = json.loads(result.stdout)["comparisons"]
    carried = [MARKER in json.dumps(r.body) for r in server.model_requests()]
    return compared, carried


@pytest.fixture
def codex(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for name in ("CODEX_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    write(tmp_path / "AGENTS.md", f"# Project rules ({MARKER})\n\nAlways create the file done.\n")
    return ensure_cli("@openai/codex")


def test_a_model_that_obeys_agents_md_only_when_sent_it_helps(
    invoke: Invoke, tmp_path: Path, codex: Path
) -> None:
    obeys = [shell("touch done"), say("Created done, as AGENTS.md asks.")]
    with ModelServer([say("Nothing to do.")], when={MARKER: obeys}) as server:
        compared, carried = _run(invoke, tmp_path, server, codex)
    assert (compared["with"], compared["without"]) == ({"passed": 4, "trials": 4}, {"passed": 0, "trials": 4})
    assert compared["effect"] == "helps", compared["text"]
    # Audited: every with-arm trial is known to have sent AGENTS.md to the model.
    assert (compared["loaded"], compared["loaded_unknown"]) == (4, 0)
    assert compared["text"].startswith("with 4/4 (loaded 4/4) · without 0/4 · helps, p = 0.0286")
    # The fake's own log: the marker reached the model in the with arm's requests and never otherwise.
    assert carried.count(True) >= 4 and carried.count(False) >= 4


def test_a_model_that_ignores_agents_md_shows_no_difference(
    invoke: Invoke, tmp_path: Path, codex: Path
) -> None:
    with ModelServer([shell("touch done"), say("Created done.")]) as server:
        compared, carried = _run(invoke, tmp_path, server, codex)
    assert (compared["with"], compared["without"]) == ({"passed": 4, "trials": 4}, {"passed": 4, "trials": 4})
    assert compared["effect"] == "no significant difference", compared["text"]
    assert compared["loaded"] == 4  # it reached the model; the model just did not care
    assert carried.count(True) >= 4 and carried.count(False) >= 4
