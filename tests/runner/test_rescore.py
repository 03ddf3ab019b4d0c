"""Re-scoring a kept run: the current assertions over recorded trials, with no agent process started.

Three script agents leave different final sandboxes (a file written, a template file deleted, a link
made, a mode changed). After the eval's assertions change, re-scoring the kept run must give exactly the
verdicts, and every trial's every check, that a fresh run of the same agents gives; the supervisor's
record of started processes and a log each agent appends to outside its sandbox show no agent ran.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from trialbook.sandbox.supervisor import Supervisor

from .conftest import Invoke, invoke, write

__all__ = ["invoke"]

TRIALS = 3

CHECKS = """
import os


def old_gone(trial):
    return not trial.exists("old.txt")


def executable(trial):
    return os.access(trial.workdir / "run.sh", os.X_OK)


def linked(trial):
    assert os.readlink(trial.workdir / "link.txt") == "target.txt", "link.txt does not lead to target.txt"
    return trial.read_text("link.txt") == "the target\\n"
"""


def _eval(root: Path, pattern: str, *, more: bool) -> None:
    starts = root / "starts.log"
    # `good` does everything; `partial` deletes and links but changes no mode; `lazy` writes version 1.
    both = "rm old.txt && ln -s target.txt link.txt"
    good = f"{both} && chmod 755 run.sh && echo 'version: 2' > out.txt; echo good >> {starts}"
    partial = f"{both} && echo 'version: 2' > out.txt; echo partial >> {starts}"
    lazy = f"echo 'version: 1' > out.txt; echo lazy >> {starts}"
    extra = (
        """
  - file_exists: link.txt
  - assert_that: {name: old-gone, check: "checks:old_gone"}
  - assert_that: {name: executable, check: "checks:executable"}
  - assert_that: {name: linked, check: "checks:linked"}
"""
        if more
        else ""
    )
    write(
        root / "evals/work.eval.yaml",
        f"""
prompt_text: do the work
sandbox: {{template: ../template}}
trials: {TRIALS}
agents:
  - {{name: good, script: {json.dumps(good)}}}
  - {{name: partial, script: {json.dumps(partial)}}}
  - {{name: lazy, script: {json.dumps(lazy)}}}
assert:
  - file_contains: {{path: out.txt, pattern: "{pattern}"}}
{extra}""",
    )


def _template(root: Path) -> None:
    write(root / "template/old.txt", "to be deleted\n")
    write(root / "template/target.txt", "the target\n")
    write(root / "template/run.sh", "#!/bin/sh\necho run\n")
    (root / "template/run.sh").chmod(0o644)
    write(root / "evals/checks.py", CHECKS)


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every process trialbook starts in a trial, as the supervisor records it."""
    seen: list[int] = []
    original = Supervisor.started

    def record(self: Supervisor, pid: int, env: Any) -> None:
        seen.append(pid)
        original(self, pid, env)

    monkeypatch.setattr(Supervisor, "started", record)
    return seen


def _starts(root: Path) -> list[str]:
    path = root / "starts.log"
    return path.read_text().split() if path.exists() else []


def _latest(root: Path) -> Path:
    return (root / ".trialbook/runs/latest").resolve()


def _verdicts(run: Path) -> dict[str, Any]:
    """Per pair: verdict, passed trials, and each trial's checks as (label, passed)."""
    suite = json.loads((run / "suite.json").read_text())
    found = {}
    for test in suite["tests"]:
        checks = [
            [(a["label"], a["passed"]) for a in execution["assertions"]]
            for execution in sorted(test["executions"], key=lambda e: e["trial"])
        ]
        found[test["id"]] = (test["properties"].get("verdict"), test["properties"].get("passed"), checks)
    return found


def test_rescore_gives_a_fresh_runs_verdicts_without_starting_an_agent(
    invoke: Invoke, tmp_path: Path, started: list[int]
) -> None:
    _template(tmp_path)
    _eval(tmp_path, "version: 1", more=False)
    first = invoke("eval")
    assert first.exit_code == 1, first.output  # good and partial wrote version 2
    kept = _latest(tmp_path)
    assert len(_starts(tmp_path)) == 3 * TRIALS and started
    _eval(tmp_path, "version: 2", more=True)

    started.clear()
    rescored = invoke("rescore", env={"CI": None})  # outside CI: no agent starts, so no --unsafe-local
    assert rescored.exit_code == 1, rescored.output  # partial and lazy fail the new checks
    assert started == [] and len(_starts(tmp_path)) == 3 * TRIALS  # no agent process, no script ran
    assert "rescored from the recorded trials of run" in rescored.output
    again = _latest(tmp_path)
    assert again != kept
    manifest = json.loads((again / "manifest.json").read_text())
    assert manifest["rescored_from"] == kept.name
    assert {pair["rescored_from"] for pair in manifest["pairs"]} == {kept.name}
    assert [line["extra"]["rescored_from"] for line in manifest["history_lines"]] == [kept.name] * 3
    recorded = [
        json.loads(line) for line in (tmp_path / ".trialbook/history/work.jsonl").read_text().splitlines()
    ]
    assert [(line["agent"], line["extra"]["rescored_from"]) for line in recorded] == [
        ("good", kept.name),
        ("partial", kept.name),
        ("lazy", kept.name),
    ]
    for trial in range(1, TRIALS + 1):  # the recorded files came along into the new run folder
        assert (again / f"evals/work/good/trial-{trial}/changes.json").is_file()
        assert (again / f"evals/work/good/trial-{trial}/script.log").is_file()

    fresh = invoke("eval", "--force")
    assert fresh.exit_code == 1, fresh.output
    assert len(_starts(tmp_path)) == 6 * TRIALS
    expected = _verdicts(_latest(tmp_path))
    assert _verdicts(again) == expected
    # The checks of deleted files, links and modes really decided something, differently per agent.
    assert expected["work::good"][:2] == ("pass", TRIALS)
    partial_checks = dict(expected["work::partial"][2][0])
    assert partial_checks['assert_that "executable"'] is False and partial_checks['assert_that "old-gone"']
    assert expected["work::lazy"][:2] == ("fail", 0)


def test_the_cache_rescores_when_only_assertions_changed(
    invoke: Invoke, tmp_path: Path, started: list[int]
) -> None:
    _template(tmp_path)
    _eval(tmp_path, "version: 1", more=False)
    assert invoke("eval").exit_code == 1
    kept = _latest(tmp_path).name
    _eval(tmp_path, "version: 2", more=True)
    started.clear()

    result = invoke("eval")
    assert result.exit_code == 1, result.output
    assert started == [] and len(_starts(tmp_path)) == 3 * TRIALS
    assert f"work::good: rescored from the recorded trials of run {kept}, no agent started" in result.output
    manifest = json.loads((_latest(tmp_path) / "manifest.json").read_text())
    assert "rescored_from" not in manifest  # an eval run, not a `trialbook rescore`
    assert [pair["verdict"] for pair in manifest["pairs"]] == ["pass", "fail", "fail"]
    reasons = [pair["reason"] for pair in manifest["pairs"]]
    assert all(reason.startswith("rescored: only the assertions changed") for reason in reasons)
    assert [line["extra"]["rescored_from"] for line in manifest["history_lines"]] == [kept] * 3

    # A change beyond the assertions (here the prompt) needs the agents again.
    text = (tmp_path / "evals/work.eval.yaml").read_text().replace("do the work", "do the work well")
    (tmp_path / "evals/work.eval.yaml").write_text(text)
    assert invoke("eval").exit_code == 1
    assert len(_starts(tmp_path)) == 6 * TRIALS


def test_a_command_check_is_not_rescorable_and_says_why(
    invoke: Invoke, tmp_path: Path, started: list[int]
) -> None:
    _template(tmp_path)
    _eval(tmp_path, "version: 2", more=False)
    assert invoke("eval").exit_code == 1
    text = (tmp_path / "evals/work.eval.yaml").read_text() + "  - succeeds: test -x run.sh\n"
    (tmp_path / "evals/work.eval.yaml").write_text(text)
    started.clear()

    result = invoke("rescore")
    assert result.exit_code == 1, result.output
    assert started == []
    assert "not_rescorable work [good]" in result.output
    assert "it runs a command" in result.output
    manifest = json.loads((_latest(tmp_path) / "manifest.json").read_text())
    assert {pair["action"] for pair in manifest["pairs"]} == {"filtered"}
    assert manifest["history_lines"] == []


def test_a_missing_or_unknown_run_is_a_clear_error(invoke: Invoke, tmp_path: Path) -> None:
    result = invoke("rescore")
    assert result.exit_code == 2
    assert "no kept run to rescore" in result.output and "trialbook eval" in result.output
    result = invoke("rescore", "20990101T000000Z-abcdef")
    assert result.exit_code == 2
    assert "RUN 20990101T000000Z-abcdef: no run folder" in result.output


SECRET = "tok-" + "9f8e7d6c5b4a" * 2


def _recorded(root: Path, checks: str) -> None:
    script = 'echo "TOKEN=$API_TOKEN" > .env; echo ok > plain.txt; '
    script += 'head -c 3000000 /dev/zero | tr "\\0" a > big.txt'
    write(
        root / "evals/kept.eval.yaml",
        f"""
prompt_text: write files
secrets: [API_TOKEN]
trials: 2
agents: [{{name: s, script: {json.dumps(script)}}}]
assert:
  - file_exists: plain.txt
{checks}""",
    )


def test_a_masked_or_oversized_file_is_not_rescorable_and_other_files_still_are(
    invoke: Invoke, tmp_path: Path, started: list[int]
) -> None:
    env = {"API_TOKEN": SECRET}
    _recorded(tmp_path, "")
    assert invoke("eval", env=env).exit_code == 0
    kept = _latest(tmp_path).name
    started.clear()

    _recorded(tmp_path, '  - file_contains: {path: plain.txt, pattern: "ok"}\n')
    plain = invoke("rescore", kept, env=env)
    assert plain.exit_code == 0, plain.output  # the other files' states do not matter to this check

    _recorded(tmp_path, '  - file_contains: {path: .env, pattern: "TOKEN="}\n')
    masked = invoke("rescore", kept, env=env)
    assert masked.exit_code == 1
    assert "not_rescorable kept [s]" in masked.output
    assert ".env: its content held a secret, kept masked" in masked.output

    _recorded(tmp_path, '  - file_contains: {path: big.txt, pattern: "a"}\n')
    big = invoke("rescore", kept, env=env)
    assert big.exit_code == 1
    assert "big.txt: larger than 2097152 bytes, kept by size and hash only" in big.output
    assert started == []
    for path in (tmp_path / ".trialbook").rglob("*"):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path


def test_a_check_that_never_returns_ends_at_the_check_deadline(invoke: Invoke, tmp_path: Path) -> None:
    _template(tmp_path)
    hang = "import threading\n\n\ndef forever(trial):\n    threading.Event().wait()\n"
    write(tmp_path / "evals/hang.py", hang)
    _eval(tmp_path, "version: 2", more=False)
    assert invoke("eval").exit_code == 1
    text = (tmp_path / "evals/work.eval.yaml").read_text()
    text += '  - assert_that: {name: hangs, check: "hang:forever"}\nlimits: {checks: 1s}\n'
    (tmp_path / "evals/work.eval.yaml").write_text(text)

    result = invoke("rescore")
    assert result.exit_code == 1, result.output
    assert "the checks did not finish within the check deadline of 1s" in result.output


def test_a_tampered_run_folder_is_read_as_data(invoke: Invoke, tmp_path: Path, started: list[int]) -> None:
    _template(tmp_path)
    _eval(tmp_path, "version: 2", more=False)
    assert invoke("eval").exit_code == 1
    kept = _latest(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("not the run's\n")
    good = kept / "evals/work/good/trial-1"
    (good / "evil").symlink_to(outside)
    os.mkfifo(good / "pipe")  # copying it would block the rescore
    changes = kept / "evals/work/partial/trial-1/changes.json"
    record = json.loads(changes.read_text())
    record["files"].append({"path": "../escape.txt", "after": None, "rebuild": {"kind": "gone"}})
    changes.write_text(json.dumps(record))
    manifest_path = kept / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["pairs"][2]["result"]["folder"] = "../../outside"  # lazy's trials, said to be elsewhere
    manifest_path.write_text(json.dumps(manifest))
    _eval(tmp_path, "version: 2\\n", more=False)
    started.clear()

    result = invoke("rescore", str(kept))
    assert result.exit_code == 1, result.output
    assert started == []
    assert "not_rescorable work [partial]" in result.output and "'../escape.txt'" in result.output
    assert "not_rescorable work [lazy]" in result.output
    new = _latest(tmp_path) / "evals/work/good/trial-1"
    assert (new / "changes.json").is_file()
    assert not (new / "evil").exists() and not (new / "evil").is_symlink() and not (new / "pipe").exists()


def test_a_trial_past_the_listing_limit_is_not_rescorable_and_gone_evals_are_an_error(
    invoke: Invoke, tmp_path: Path
) -> None:
    script = "for i in $(seq 1002); do echo $i > f$i.txt; done"
    write(
        tmp_path / "evals/many.eval.yaml",
        f"prompt_text: many files\nagents: [{{name: s, script: {json.dumps(script)}}}]\n"
        "assert:\n  - file_exists: f1.txt\n",
    )
    assert invoke("eval").exit_code == 0
    text = (tmp_path / "evals/many.eval.yaml").read_text().replace("f1.txt", "f2.txt")
    (tmp_path / "evals/many.eval.yaml").write_text(text)

    result = invoke("rescore")
    assert result.exit_code == 1, result.output
    assert "2 changed paths past the 1000-entry limit are not listed" in result.output

    (tmp_path / "evals/many.eval.yaml").unlink()
    gone = invoke("rescore")
    assert gone.exit_code == 2
    assert "manifest.json: field pairs[].eval_file names no eval file that exists here" in gone.output
    assert "--evals" in gone.output
