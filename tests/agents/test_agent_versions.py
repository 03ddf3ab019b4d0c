"""One agent at two versions on the same evals: the pinned release beside the newest, compared per eval.

The real Claude Code CLI, installed by trialbook itself from npm at the versions the eval names (into the
tests' CLI cache, so an installed version is reused), against the loopback model.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from tests.clis import CACHE, PINNED
from tests.fakes.model_server import ModelServer, say, shell
from trialbook.runner._versions import VersionDrift, VersionRun, drift_headlines

from ..runner.conftest import Invoke, invoke

__all__ = ["invoke"]

PINNED_CLAUDE = PINNED["@anthropic-ai/claude-code"][0]
KEY = "sk-ant-fake-" + "c3" * 20


def _eval(root: Path, url: str) -> None:
    (root / "evals").mkdir()
    (root / "evals/hello.eval.yaml").write_text(
        "prompt_text: Make hello.txt.\n"
        "secrets: [FAKE_ANTHROPIC_KEY]\n"
        "negative_control: false\n"
        "agents:\n"
        + "".join(
            f"  - {{name: claude-code, version: {version}, model: sonnet,\n"
            f"     env: {{ANTHROPIC_API_KEY: '{{{{ secrets.FAKE_ANTHROPIC_KEY }}}}',\n"
            f"           ANTHROPIC_BASE_URL: {url}}}}}\n"
            for version in (PINNED_CLAUDE, "latest")
        )
        + "assert: [file_exists: hello.txt]\n"
        "timeout: 3m\n"
    )


@pytest.mark.real_cli
def test_the_pinned_and_the_newest_release_run_side_by_side(
    invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRIALBOOK_AGENT_CACHE", str(CACHE))
    with ModelServer([shell("echo hi > hello.txt"), say("Done.")]) as server:
        _eval(tmp_path, server.url)
        result = invoke(
            "eval", "evals", "--history-dir", "history", "--summary", "summary.md",
            env={"FAKE_ANTHROPIC_KEY": KEY},
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / ".trialbook/runs/latest/manifest.json").read_text())
    labels = [pair["agent"] for pair in manifest["pairs"]]
    assert labels == [f"claude-code-{PINNED_CLAUDE}", "claude-code-latest"]
    (drift,) = manifest["versions"]
    pinned, newest = drift["runs"]
    assert (pinned["label"], pinned["version"], pinned["passed"]) == (labels[0], PINNED_CLAUDE, 1)
    assert newest["label"] == "claude-code-latest" and newest["passed"] == 1
    assert newest["version"] and newest["version"] != "latest"  # the exact release that ran
    assert (drift["differs"], drift["regressed"]) == (False, None)
    assert "agent versions:" in result.output
    assert f"hello [claude-code]  {PINNED_CLAUDE} ({labels[0]}) 1/1 · {newest['version']}" in result.output
    summary = (tmp_path / "summary.md").read_text()
    assert "### Agent versions" in summary and f"{PINNED_CLAUDE} ({labels[0]}) 1/1" in summary
    lines = [json.loads(line) for line in (tmp_path / "history/hello.jsonl").read_text().splitlines()]
    assert {(line["agent"], line["agent_version"]) for line in lines} == {
        (labels[0], PINNED_CLAUDE),
        ("claude-code-latest", newest["version"]),
    }


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ("version: latest, binary: /usr/bin/true", "give either version (installed from npm) or binary"),
        ("version: 'Two!'", "expected an exact release such as 2.1.197, or latest"),
        ("version: '1.2'", "expected an exact release such as 2.1.197, or latest"),
    ],
)
def test_a_wrong_version_option_names_the_fix(
    invoke: Invoke, tmp_path: Path, options: str, said: str
) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/v.eval.yaml").write_text(
        f"prompt_text: hi\nagents: [{{name: claude-code, {options}}}]\n"
    )
    result = invoke("eval", "evals")
    assert result.exit_code == 2, result.output
    assert "agent 'claude-code': version: " in result.output and said in result.output


def _run(label: str, passed: int, verdict: str) -> VersionRun:
    return VersionRun(label, label.rsplit("-", 1)[1], passed, 3, verdict)


def test_the_headline_names_what_the_newer_release_fails_that_the_pin_passes() -> None:
    pin, new = "claude-code-2.1.197", "claude-code-latest"
    drifts = [
        VersionDrift("deploy", "claude-code", _run(pin, 3, "pass"), _run(new, 0, "fail"), Fraction(1, 10)),
        VersionDrift("setup", "claude-code", _run(pin, 3, "pass"), _run(new, 1, "fail"), Fraction(4, 10)),
        VersionDrift("lint", "claude-code", _run(pin, 3, "pass"), _run(new, 3, "pass"), Fraction(1)),
    ]
    assert drift_headlines(drifts) == [f"{new} fails 2 evals {pin} passes: deploy, setup"]
    assert drifts[0].differs and not drifts[1].differs
    assert drifts[0].text() == f"2.1.197 ({pin}) 3/3 · latest ({new}) 0/3 · differ, p = 0.1"


def test_a_comparison_read_from_ci_json_is_checked_and_rendered() -> None:
    from trialbook.report.markdown import render_summary
    from trialbook.report.versions import checked_drift

    pin, new = "claude-code-2.1.197", "claude-code-latest"
    drift = VersionDrift("deploy", "claude-code", _run(pin, 3, "pass"), _run(new, 0, "fail"), Fraction(1, 10))
    item = drift.to_json()
    assert checked_drift(item) == item
    runs = item["runs"]
    assert isinstance(runs, list)
    assert checked_drift({**item, "runs": runs[:1]}) is None  # a state file is data
    assert checked_drift({**item, "p_value": 2}) is None
    summary = render_summary([], versions=[item])
    assert f"**{new} fails 1 eval {pin} passes: deploy**" in summary
