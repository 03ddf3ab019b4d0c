"""``compare: without`` end to end: two arms, their own labels, keys and history lines, one comparison."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema

from .conftest import Invoke, write

# Follows the instruction only when the file is in its sandbox, as an agent that reads AGENTS.md would.
FOLLOWS = "if [ -f AGENTS.md ]; then touch done; fi"
IGNORES = "touch done"


def _eval(root: Path, script: str, *, trials: int = 6, extra: str = "") -> None:
    write(root / "AGENTS.md", "Always create the file done.\n")
    write(
        root / "evals/follow.eval.yaml",
        f"""
        prompt_text: do the task
        instructions: [../AGENTS.md]
        agents: [{{name: fake, script: "{script}"}}]
        trials: {trials}
        compare: without
        {extra}
        assert:
          - file_exists: done
        """,
    )


def _lines(root: Path) -> list[dict[str, object]]:
    return [json.loads(text) for text in (root / "history/follow.jsonl").read_text().splitlines()]


def _manifest(root: Path) -> Any:
    return json.loads((root / ".trialbook/runs/latest/manifest.json").read_text())


SCHEMA_DIR = Path(__file__).resolve().parents[2] / "docs/schemas"
SCHEMA = json.loads((SCHEMA_DIR / "run.schema.json").read_text())


def test_an_agent_that_ignores_the_instruction_shows_no_difference(invoke: Invoke, tmp_path: Path) -> None:
    _eval(tmp_path, IGNORES)
    dry = invoke("eval", "evals", "--dry-run", "--history-dir", "history")
    assert "run       follow [fake]" in dry.output and "run       follow [fake~without]" in dry.output
    listed = invoke("list", "evals", "--json")
    assert listed.exit_code == 0, listed.output
    document = json.loads(listed.stdout)
    list_schema = json.loads((SCHEMA_DIR / "list.schema.json").read_text())
    jsonschema.validate(document, list_schema, cls=jsonschema.Draft202012Validator)
    assert [(p["agent"], p["arm"]) for p in document["pairs"]] == [
        ("fake", "with"),
        ("fake~without", "without"),
    ]
    result = invoke("eval", "evals", "--history-dir", "history", "--summary", "summary.md")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith("follow  fake~without"))
    assert "without arm: not judged, see the comparison below" in row
    same = "with 6/6 (loaded ?/6) · without 6/6 · no significant difference, p = 1"
    assert f"follow [fake]  {same}" in result.output
    with_line, without_line = sorted(_lines(tmp_path), key=lambda line: str(line["agent"]))
    assert (with_line["agent"], without_line["agent"]) == ("fake", "fake~without")
    with_extra, without_extra = with_line["extra"], without_line["extra"]
    assert isinstance(with_extra, dict) and isinstance(without_extra, dict)
    assert with_extra["arm"] == "with" and "loaded" not in with_extra  # unknown is not written as 0
    assert (without_extra["arm"], without_extra["dropped"]) == ("without", ["AGENTS.md"])
    assert with_line["cache_key"] != without_line["cache_key"]
    assert (with_line["trials"], without_line["trials"]) == (6, 6)
    summary = (tmp_path / "summary.md").read_text()
    assert "### With and without" in summary
    assert "follow × fake: with 6/6 (loaded ?/6) · without 6/6 · no significant difference, p = 1" in summary
    manifest = _manifest(tmp_path)
    jsonschema.validate(manifest, SCHEMA, cls=jsonschema.Draft202012Validator)
    (compared,) = manifest["comparisons"]
    assert compared["effect"] == "no significant difference"
    assert compared["loaded"] is None  # no audit ran: unknown, never counted as loaded
    assert (tmp_path / ".trialbook/runs/latest/evals/follow/fake~without/trial-6/result.json").is_file()

    report = invoke("report")
    assert report.exit_code == 0, report.output
    assert f"follow × fake: {same}" in report.output
    assert "fake~without" not in report.output.split("### With and without")[0]  # no row of its own

    again = invoke("eval", "evals", "--history-dir", "history")
    assert again.exit_code == 0, again.output
    assert "cached (pass)" in again.output
    # Both arms cached: the comparison still shows, from the lines they were cached from.
    assert "follow [fake]  with 6/6 (loaded ?/6) · without 6/6 · no significant difference" in again.output


def test_an_agent_that_follows_the_instruction_shows_that_it_helps(invoke: Invoke, tmp_path: Path) -> None:
    _eval(tmp_path, FOLLOWS)
    result = invoke("eval", "evals", "--history-dir", "history", "--json", "--junit", "junit.xml")
    # The without arm fails every trial, and that fails nothing: pass_rate judges the with arm.
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA, cls=jsonschema.Draft202012Validator)
    (compared,) = document["comparisons"]
    assert (compared["with"], compared["without"]) == ({"passed": 6, "trials": 6}, {"passed": 0, "trials": 6})
    assert compared["effect"] == "helps"
    assert compared["p_value"] < 0.05
    assert compared["text"] == "with 6/6 (loaded ?/6) · without 0/6 · helps, p = 0.00216"
    arms = {pair["agent"]: (pair["arm"], pair["verdict"]) for pair in document["pairs"]}
    assert arms == {"fake": ("with", "pass"), "fake~without": ("without", "fail")}
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    with_test, without_test = suite["tests"]
    assert with_test["properties"]["comparison"]["effect"] == "helps"
    assert without_test["properties"]["arm"] == "without"
    assert "comparison" not in without_test["properties"]
    junit = ET.parse(tmp_path / "junit.xml").getroot()
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("2", "0", "0")
    assert junit.find("testcase[@classname='fake~without']/failure") is None
    assert "not judged: fail" in (junit.findtext("testcase[@classname='fake~without']/system-out") or "")


def test_the_with_arm_alone_decides_the_exit_code(invoke: Invoke, tmp_path: Path) -> None:
    # Passes only without the instruction: the with arm fails, so the run fails.
    _eval(tmp_path, "if [ ! -f AGENTS.md ]; then touch done; fi")
    result = invoke("eval", "evals", "--history-dir", "history")
    assert result.exit_code == 1, result.output
    assert "with 0/6 (loaded ?/6) · without 6/6 · hurts" in result.output


def test_too_few_trials_say_so_and_adaptive_trials_do_not_stop_a_compared_eval(
    invoke: Invoke, tmp_path: Path
) -> None:
    _eval(tmp_path, FOLLOWS, trials=3)
    result = invoke("eval", "evals", "--history-dir", "history", "--adaptive")
    assert result.exit_code == 0, result.output
    assert "with 3/3 (loaded ?/3) · without 0/3 · no significant difference, p = 0.1 (too few trials" in (
        result.output
    )
    assert "saved" not in result.output


def test_both_arms_of_a_pair_land_in_the_same_shard(invoke: Invoke, tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "Always create the file done.\n")
    for n in range(8):
        write(
            tmp_path / f"evals/e{n}.eval.yaml",
            f"""
            prompt_text: task {n}
            instructions: [../AGENTS.md]
            agents: [{{name: fake, script: "{IGNORES}"}}, {{name: other, script: "{IGNORES}"}}]
            compare: without
            """,
        )
    placed: dict[str, set[str]] = {}
    for shard in ("1/3", "2/3", "3/3"):
        dry = invoke("eval", "evals", "--dry-run", "--shard", shard)
        assert dry.exit_code == 0, dry.output
        for line in dry.output.splitlines():
            if line.startswith("run "):
                pair = line.split()[1] + " " + line.split()[2].removesuffix("~without]").removesuffix("]")
                placed.setdefault(pair, set()).add(shard + (" without" if "~without]" in line else " with"))
    assert len(placed) == 16
    for pair, arms in placed.items():
        (shard,) = {arm.split()[0] for arm in arms}
        assert arms == {f"{shard} with", f"{shard} without"}, pair
