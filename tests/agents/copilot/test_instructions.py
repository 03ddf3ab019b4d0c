"""Declared instruction files and skills reach the real Copilot CLI, and the request audit says which did.

Copilot discovers instruction files in its working folder itself; declared skills are handed to the
session as a skill directory. With ``audit_requests`` each declared input is ``loaded: true`` when its text
was in a request's context and ``false`` when no request carried it (a copilot-instructions.md outside
``.github/``); without an audit every row is ``null``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.openai_chat import ChatServer, call, text
from trialbook.evidence import load_suite

from ...runner.conftest import Invoke, invoke
from .._instructions_eval import loaded_rows, markers_in, write_eval, write_repo

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

PROVIDER_KEY = "sk-provider-fake-" + "5e" * 20


def _copilot(cli: str, server: ChatServer, pkg_cache: str, *, audit: bool) -> str:
    return f"""
    - name: copilot
      cli_path: {cli}
      model: fake-model
      audit_requests: {str(audit).lower()}
      provider:
        type: openai
        base_url: {server.base_url}
        api_key: "{{{{ secrets.FAKE_PROVIDER_KEY }}}}"
      env: {{COPILOT_PKG_CACHE_HOME: {pkg_cache}}}
    """


def test_the_audit_decides_loaded_from_what_copilot_sent(
    invoke: Invoke, tmp_path: Path, copilot_cli: str, pkg_cache: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "COPILOT_CLI_PATH"):
        monkeypatch.delenv(name, raising=False)
    write_repo(tmp_path)
    checks = ("loaded: AGENTS.md", "loaded: deploy-notes", "skill_used: deploy-notes")
    with ChatServer([call("skill", skill="deploy-notes"), text("Hello.")]) as server:
        for name, audit in (("audited", True), ("unaudited", False)):
            write_eval(
                tmp_path,
                name,
                _copilot(copilot_cli, server, pkg_cache, audit=audit),
                secrets=["FAKE_PROVIDER_KEY"],
                checks=checks,
            )
        result = invoke("eval", "evals", "--concurrency", "1", env={"FAKE_PROVIDER_KEY": PROVIDER_KEY})
        requests = list(server.requests)
    # Without an audit, loaded: cannot pass, and says why.
    assert result.exit_code == 1, result.output
    suite = load_suite(tmp_path / ".trialbook/runs/latest/suite.json")
    assert {test.id: test.outcome for test in suite.tests} == {
        "audited::copilot": "passed",
        "unaudited::copilot": "failed",
    }
    unaudited_checks = suite.tests[1].executions[0].assertions
    assert [(a.kind, a.passed) for a in unaudited_checks] == [
        ("loaded", False),
        ("loaded", False),
        ("skill_used", True),
    ]
    assert "no request audit ran" in unaudited_checks[0].actual
    assert "audit_requests: true" in unaudited_checks[0].actual
    # The fake's log: every trial's first request carried the files Copilot discovers and the skill,
    # never the misplaced one.
    firsts = [body for body in requests if not any(m["role"] == "tool" for m in body["messages"])]
    assert len(firsts) == 2
    expected = {"AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", "skill"}
    assert [markers_in(body) for body in firsts] == [expected, expected]
    folder = tmp_path / ".trialbook/runs/latest/evals"
    assert loaded_rows(folder / "audited/copilot/trial-1/result.json") == {
        "AGENTS.md": True,
        "CLAUDE.md": True,
        ".github/copilot-instructions.md": True,
        "docs/copilot-instructions.md": False,
        "docs/AGENTS.md": False,
        "docs/CLAUDE.md": False,
        ".github/skills/deploy-notes": True,
    }
    unaudited = loaded_rows(folder / "unaudited/copilot/trial-1/result.json")
    assert set(unaudited.values()) == {None}
    assert len(unaudited) == 7
