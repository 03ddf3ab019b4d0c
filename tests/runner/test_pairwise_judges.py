"""Pairwise judging of ``compare: without`` arms, end to end against loopback chat servers.

An eval runs ``with`` its instruction file and ``without`` it; the script agent writes the marker the
rubric asks for only when the instruction file is in its sandbox. Judges then compare the two arms'
shown material trial by trial, in both orders: one judge follows the rubric (prefers the response that
holds the marker), one always prefers whichever response it was shown first (a position bias: ties),
one answers garbage (errors, never a preference). The servers' request logs are scanned for a secret
the agent wrote into a shown file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from trialbook.testing import ChatServer, Reply, text

from .conftest import refused_by_validate, write

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs/schemas/run.schema.json").read_text())


def test_pairwise_without_compare_names_the_file_field_and_fix(tmp_path: Path) -> None:
    write(
        tmp_path / "evals/alone.eval.yaml",
        """
prompt_text: hi
agents: [literal]
assert:
  - judge:
      rubric: the notes explain the failure
      judges: [{provider: openai, model: m}]
      pairwise: true
""",
    )
    out = refused_by_validate(tmp_path)
    assert (
        "alone.eval.yaml:7: assert[0].judge.pairwise: pairwise judging compares the arms of compare:" in out
    )
    assert "(add compare: without" in out


MARKER = "EXPLAINED-THE-FAILURE"
SECRET = "pairwise-leak-3b9e1d7a5c2f4e80"
RUBRIC = "The notes explain to the user why the build failed."
PASS = '{"verdict": "pass", "reason": "fine on its own"}'
# Writes the explanation only when the instruction file is in its sandbox: the with arm meets the rubric.
AGENT = (
    f"if [ -f AGENTS.md ]; then printf 'the build failed: {MARKER}\\n' > NOTES.md; "
    "else printf 'all good\\n' > NOTES.md; fi; "
    "printf 'TOKEN=%s\\n' \"$LEAKED\" > .env; echo done"
)


def _responses(body: dict[str, Any]) -> tuple[str, str] | None:
    """The two responses of a pairwise request; ``None`` for a request grading one trial alone."""
    prompt = str(body["messages"][-1]["content"])
    if "Second response:" not in prompt:
        return None
    first, _, rest = prompt.partition("First response:")[2].partition("Second response:")
    return first, rest.partition("Which response better meets the rubric?")[0]


def _follows(body: dict[str, Any]) -> Reply:
    shown = _responses(body)
    if shown is None:
        return text(PASS)
    better = "first" if MARKER in shown[0] and MARKER not in shown[1] else "second"
    return text(json.dumps({"better": better, "reason": "the explanation is in this one"}))


def _first_shown(body: dict[str, Any]) -> Reply:
    shown = _responses(body)
    return text(PASS if shown is None else '{"better": "first", "reason": "the first one reads well"}')


def _garbage(body: dict[str, Any]) -> Reply:
    shown = _responses(body)
    return text(PASS if shown is None else "Both are great! I would go with the first, probably.")


@pytest.fixture
def servers() -> Iterator[dict[str, ChatServer]]:
    with ChatServer(_follows) as follows, ChatServer(_first_shown) as first, ChatServer(_garbage) as garbage:
        yield {"follows": follows, "first": first, "garbage": garbage}


def _eval(root: Path, name: str, server: ChatServer) -> None:
    write(root / "AGENTS.md", "Explain in NOTES.md why the build failed.\n")
    provider = {"type": "openai", "base_url": server.base_url, "api_key": "{{ secrets.JUDGE_KEY }}"}
    judge = json.dumps({"provider": provider, "model": "gpt-5"})
    write(
        root / f"evals/{name}.eval.yaml",
        f"""
prompt_text: fix the build and explain what failed
secrets: [JUDGE_KEY, LEAKED]
instructions: [../AGENTS.md]
compare: without
trials: 2
agents: [{{name: fake, script: {json.dumps(AGENT)}}}]
assert:
  - judge:
      rubric: {json.dumps(RUBRIC)}
      show: [{{file: NOTES.md}}, {{file: .env}}]
      judges: [{judge}]
      pairwise: true
""",
    )


def _run(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "JUDGE_KEY": "sk-judge-key-0123456789",
        "LEAKED": SECRET,
        "TRIALBOOK_HISTORY_DIR": str(root / "history"),
    }
    env.pop("CI", None)
    trialbook = str(Path(sys.executable).with_name("trialbook"))
    command = [trialbook, "eval", "evals", "--unsafe-local", "--results-dir", "results"]
    command += ["--summary", "summary.md", *extra]
    return subprocess.run(
        command, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_judges_compare_the_arms_in_both_orders(tmp_path: Path, servers: dict[str, ChatServer]) -> None:
    for name in ("follows", "first", "garbage"):
        _eval(tmp_path, name, servers[name])
    done = _run(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    manifest = json.loads((tmp_path / "results/manifest.json").read_text())
    jsonschema.validate(manifest, SCHEMA, cls=jsonschema.Draft202012Validator)
    pairwise = {found["id"]: found["pairwise"] for found in manifest["comparisons"]}
    counts = {
        name: (found["with_preferred"], found["without_preferred"], found["ties"], found["errors"])
        for name, found in pairwise.items()
    }
    assert counts == {
        "follows": (2, 0, 0, 0),  # the rubric-following judge prefers the arm that explains, in both orders
        "first": (0, 0, 2, 0),  # always the first shown: the preference flips with the order, a tie
        "garbage": (0, 0, 0, 2),  # an unparsable answer is an error, never a preference
    }
    # Two trials × one judge × two orders; the second trial's identical material is answered from the cache.
    assert all(found["judge_calls"] == 4 for found in pairwise.values())
    assert pairwise["follows"]["judge_cost_usd"] > 0
    assert "follows [fake]  with 2/2" in done.stdout
    assert "judges: with preferred 2, without preferred 0, 0 ties, 0 errors" in done.stdout
    assert "judges: with preferred 0, without preferred 0, 2 ties, 0 errors" in done.stdout
    assert "judges: with preferred 0, without preferred 0, 0 ties, 2 errors" in done.stdout
    summary = (tmp_path / "summary.md").read_text()
    assert "judges: with preferred 2, without preferred 0, 0 ties, 0 errors" in summary
    suite = json.loads((tmp_path / "results/suite.json").read_text())
    tests = {test["id"]: test for test in suite["tests"]}
    assert tests["follows::fake"]["properties"]["comparison"]["pairwise"] == pairwise["follows"]
    # The pairwise requests count as judge cost of the with arm: two trial checks and four pairwise calls.
    props = tests["follows::fake"]["properties"]
    assert props["judge_calls"] == 2 + 4
    assert props["judge_cost_usd"] >= pairwise["follows"]["judge_cost_usd"] > 0
    recorded = json.loads((tmp_path / "results/evals/garbage/fake/pairwise.json").read_text())
    assert recorded["without"] == "fake~without"
    assert [d["preferred"] for d in recorded["decisions"]] == [None, None]
    followed = json.loads((tmp_path / "results/evals/follows/fake/pairwise.json").read_text())
    decision = followed["decisions"][0]
    assert (decision["trial"], decision["check"], decision["preferred"]) == (1, 0, "with")
    calls = decision["calls"]
    assert [(c["first_shown"], c["better"]) for c in calls] == [("with", "first"), ("without", "second")]
    assert (
        "better and reason" in recorded["decisions"][0]["error"]
        or "not JSON" in recorded["decisions"][0]["error"]
    )
    # What each trial showed is kept in its evidence, masked: the comparison needs no sandbox.
    result = json.loads((tmp_path / "results/evals/follows/fake/trial-1/result.json").read_text())
    (kept,) = result["pairwise_shown"]
    assert kept["check"] == 0 and MARKER in kept["shown"] and SECRET not in kept["shown"]
    # Both arms' material reached the judges, masked: the secret in the shown .env never did.
    sent = json.dumps([server.requests for server in servers.values()])
    assert MARKER in sent and "all good" in sent
    assert SECRET not in sent and SECRET[:12] not in sent


def test_turning_pairwise_on_rescores_the_recorded_trials_and_compares_them(
    tmp_path: Path, servers: dict[str, ChatServer]
) -> None:
    starts = tmp_path / "starts.log"
    _eval(tmp_path, "work", servers["follows"])
    path = tmp_path / "evals/work.eval.yaml"
    source = path.read_text().replace("echo done", f"echo started >> {starts}")
    source = source.replace("{file: NOTES.md}, {file: .env}", "{file: NOTES.md}")
    path.write_text(source.replace("      pairwise: true\n", ""))
    first = _run(tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert starts.read_text().count("started") == 4  # two trials of each arm
    manifest = json.loads((tmp_path / "results/manifest.json").read_text())
    assert [found["pairwise"] for found in manifest["comparisons"]] == [None]  # none asked: not zero
    # Only the judge check changed: the recorded trials are re-scored, no agent starts, and the judges
    # compare the arms from the rebuilt sandboxes.
    path.write_text(source)
    second = _run(tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "rescored" in second.stdout + second.stderr
    assert starts.read_text().count("started") == 4
    manifest = json.loads((tmp_path / "results/manifest.json").read_text())
    jsonschema.validate(manifest, SCHEMA, cls=jsonschema.Draft202012Validator)
    (found,) = manifest["comparisons"]
    assert (found["pairwise"]["with_preferred"], found["pairwise"]["without_preferred"]) == (2, 0)


def _dear_pairwise(body: dict[str, Any]) -> Reply:
    """Grades a trial alone for nothing; a pairwise request reports 10M prompt tokens ($12.50 at gpt-5)."""
    if _responses(body) is None:
        return Reply(content=PASS, prompt_tokens=0, completion_tokens=0)
    return Reply(content=_follows(body).content, prompt_tokens=10_000_000, completion_tokens=0)


def test_once_the_budget_is_spent_the_pairs_left_are_not_compared(tmp_path: Path) -> None:
    with ChatServer(_dear_pairwise) as server:
        for name in ("first", "second"):
            _eval(tmp_path, name, server)
        # The agents' cost is unknown and the trials' own judges cost nothing: every trial runs. The
        # first pair's comparison spends the budget, so the second pair is never shown to a judge.
        done = _run(tmp_path, "--budget-usd", "1")
        pairwise_requests = [body for body in server.requests if _responses(body) is not None]
    assert done.returncode == 0, done.stdout + done.stderr
    manifest = json.loads((tmp_path / "results/manifest.json").read_text())
    jsonschema.validate(manifest, SCHEMA, cls=jsonschema.Draft202012Validator)
    pairwise = {found["id"]: found["pairwise"] for found in manifest["comparisons"]}
    (compared,) = [name for name, found in pairwise.items() if found is not None]
    (left,) = [name for name, found in pairwise.items() if found is None]  # unknown, not zero
    assert pairwise[compared]["judge_calls"] == 4 and pairwise[compared]["with_preferred"] == 2
    assert pairwise[compared]["judge_cost_usd"] > 1
    # The compared pair's two orders reached the server; its second trial's identical material was
    # answered from the judge cache (and counted as calls). The pair left asked nothing, not even the cache.
    assert len(pairwise_requests) == 2
    assert not (tmp_path / f"results/evals/{left}/fake/pairwise.json").exists()
    assert (tmp_path / f"results/evals/{compared}/fake/pairwise.json").is_file()
    suite = json.loads((tmp_path / "results/suite.json").read_text())
    tests = {test["id"]: test["properties"] for test in suite["tests"]}
    assert tests[f"{left}::fake"]["comparison"]["pairwise"] is None
    assert tests[f"{left}::fake"]["judge_calls"] == 2  # its trials' own checks, made with budget left
