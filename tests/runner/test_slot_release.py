"""When a trial gives its ``--concurrency`` place back: once its checks are done, whatever they are.

At concurrency 1 the order of events is the whole story: the second trial's agent starts only after
the first trial's checks. The agent takes 0.3 s, so that the second trial has made its sandbox and
waits for the place when the first agent ends.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

import trialbook.runner._trial as trial_module
from tests.runner.local import run_outcomes


def _events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check: str) -> list[str]:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    seen: list[str] = []
    agent_run = trial_module._agent_run
    check_trial = getattr(trial_module, "check_trial")  # noqa: B009 - imported there, patched there

    async def agent(request: Any, *args: Any) -> Any:
        seen.append(f"agent {request.trial} starts")
        return await agent_run(request, *args)

    def checked(request: Any, *args: Any) -> Any:
        seen.append(f"checks of {request.trial}")
        return check_trial(request, *args)

    monkeypatch.setattr(trial_module, "_agent_run", agent)
    monkeypatch.setattr(trial_module, "check_trial", checked)
    path = tmp_path / "evals" / "order.eval.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(
        "prompt_text: work\nagents: [{name: s, script: 'sleep 0.3; touch done'}]\n"
        "trials: 2\nnegative_control: false\n"
        f"assert:\n  - {check}\n"
    )
    outcomes = run_outcomes(path, tmp_path / "results", concurrency=1)
    assert len(outcomes) == 2 and all(outcome.passed for outcome in outcomes)
    return seen


@pytest.mark.parametrize(
    "check",
    [
        "file_exists: done",
        "succeeds: 'test -e done'",
        json.dumps({"file_exists": "done"}) + "\n  - succeeds: 'true'",
    ],
)
def test_a_trial_keeps_its_place_until_its_checks_are_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, check: str
) -> None:
    seen = _events(tmp_path, monkeypatch, check)
    assert seen == ["agent 1 starts", "checks of 1", "agent 2 starts", "checks of 2"]
