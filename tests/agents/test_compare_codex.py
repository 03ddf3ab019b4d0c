"""``compare: without`` with the real Codex CLI: a model that obeys AGENTS.md only when it reaches it.

The trials are audited (``audit_requests: true``), so the with arm's loaded count is known.

The loopback fake answers a request that carries the instruction file's marker with "create the file",
and any other request with "nothing to do". So the with arm passes every trial and the without arm none,
decided by what the real CLI actually sent, not by anything trialbook tells the fake.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clis import ensure_cli
from tests.fakes.model_server import ModelServer, say, shell

from ..runner.conftest import Invoke, invoke, write

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

CODEX_KEY = "sk-fake-codex-" + "d4" * 20
MARKER = "trialbook-marker-5c1e"


def test_codex_with_and_without_agents_md(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = ensure_cli("@openai/codex")
    for name in ("CODEX_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    write(tmp_path / "AGENTS.md", f"# Project rules ({MARKER})\n\nAlways create the file done.\n")
    obeys = [shell("touch done"), say("Created done, as AGENTS.md asks.")]
    with ModelServer([say("Nothing to do.")], when={MARKER: obeys}) as server:
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
        carried = [MARKER in json.dumps(r.body) for r in server.model_requests()]
    assert result.exit_code == 0, result.output
    (compared,) = json.loads(result.stdout)["comparisons"]
    assert (compared["with"], compared["without"]) == ({"passed": 4, "trials": 4}, {"passed": 0, "trials": 4})
    assert compared["effect"] == "helps", compared["text"]
    # Audited: every with-arm trial is known to have sent AGENTS.md to the model.
    assert (compared["loaded"], compared["loaded_unknown"]) == (4, 0)
    assert compared["text"].startswith("with 4/4 (loaded 4/4) · without 0/4 · helps, p = 0.0286")
    # The fake's own log: the marker reached the model in the with arm's requests and never otherwise.
    assert carried.count(True) >= 4 and carried.count(False) >= 4
