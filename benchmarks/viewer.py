"""How big and how slow the HTML viewer gets: 1,000 trials (and 200, a large eval) of a typical shape.

Builds a synthetic run folder (suite.json plus each trial's calls.jsonl and changes.json, the shapes
trialbook writes), then times loading it and rendering the page, next to a naive floor: the suite read
and dumped back as JSON. Each trial has 12 turns, 10 tool calls with a few hundred bytes of output
(one with 8 KB), 10 shim calls and 3 changed files.

Run: ``uv run --frozen python benchmarks/viewer.py [--trials 1000]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from trialbook.evidence import (
    AgentResult,
    AssertionRecord,
    ExecutionRecord,
    SuiteMetadata,
    SuiteReport,
    TestReport,
    ToolCall,
    Turn,
    UsageEntry,
    save_suite,
)
from trialbook.report.html import render_html
from trialbook.report.viewer_load import load_run, trial_folder

TRIALS_PER_EVAL = 10


def trial_result(n: int) -> AgentResult:
    calls = tuple(
        ToolCall(
            call_id=f"c{i}",
            name="bash",
            arguments={"command": f"acme step {i} --project demo-{n}"},
            completion_received=True,
            success=i != 9 or n % 3 != 0,
            result=("line of output from the tool\n" * (300 if i == 4 else 8)),
            error=None,
        )
        for i in range(10)
    )
    turns = (
        Turn("user", "# Deploy guide\n\n" + "Follow these steps carefully.\n" * 40),
        *(Turn("assistant", f"Running step {i}.", (f"c{i}",)) for i in range(10)),
        Turn("assistant", "Done: the app is deployed."),
    )
    usage = (UsageEntry("gpt-5", 12_000 + n, 900, 8_000, None, None, None, 2_500.0),)
    return AgentResult(
        agent_name="copilot",
        agent_version="1.0.102",
        success=True,
        error=None,
        stop_reason="completed",
        turns=turns,
        all_tool_calls=calls,
        usage=usage,
        cost_usd=None,
        model_used="gpt-5",
        duration_ms=45_000.0,
    )


def build(root: Path, trials: int) -> Path:
    tests = []
    for e in range(max(1, trials // TRIALS_PER_EVAL)):
        executions = []
        for t in range(1, TRIALS_PER_EVAL + 1):
            passed = (e + t) % 4 != 0
            executions.append(
                ExecutionRecord(
                    result=trial_result(e * 100 + t),
                    trial=t,
                    passed=passed,
                    assertions=(
                        AssertionRecord("ran", 'ran "acme deploy"', passed, "a call matching", "matched"),
                        AssertionRecord(
                            "file_exists", 'file_exists "acme.toml"', True, "exists", "it exists"
                        ),
                    ),
                )
            )
        k = sum(1 for x in executions if x.passed)
        tests.append(
            TestReport(
                id=f"eval-{e:03d}::copilot",
                outcome="passed" if k >= 8 else "failed",
                duration_s=450.0,
                properties={
                    "trials": TRIALS_PER_EVAL,
                    "passed": k,
                    "threshold": 0.8,
                    "verdict": "pass" if k >= 8 else "fail",
                },
                executions=tuple(executions),
            )
        )
    suite = SuiteReport(
        metadata=SuiteMetadata(
            producer="benchmark", trialbook_version="0.1.0", started_at="2026-01-01T00:00:00Z"
        ),
        tests=tuple(tests),
    )
    save_suite(suite, root / "suite.json")
    for test in tests:
        for execution in test.executions:
            folder = trial_folder(root, test.id, execution.trial or 0)
            folder.mkdir(parents=True)
            calls = [
                {"argv": ["acme", "step", str(i)], "cwd": "/w", "exit_code": 0, "started_at": 1e9 + i,
                 "duration_ms": 12.5, "error": None, "mode": "stub"}
                for i in range(10)
            ]  # fmt: skip
            (folder / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))
            diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n" + "+changed line\n" * 20
            files = [
                {
                    "path": f"src/file{i}.py",
                    "status": "modified",
                    "before": {"size": 100, "sha256": "0" * 64},
                    "after": {"size": 120, "sha256": "1" * 64},
                    "binary": False,
                    "diff": diff,
                    "diff_truncated": False,
                }
                for i in range(3)
            ]
            changes = {"files": files, "counts": {"created": 0, "modified": 3, "deleted": 0}, "omitted": 0}
            (folder / "changes.json").write_text(json.dumps(changes))
            (folder / "result.json").write_text("{}")
    return root / "suite.json"


def measure(trials: int) -> None:
    with tempfile.TemporaryDirectory(prefix="viewer-bench-") as tmp:
        suite_path = build(Path(tmp), trials)
        started = time.perf_counter()
        raw = json.loads(suite_path.read_text())
        naive = json.dumps(raw)
        naive_s = time.perf_counter() - started
        started = time.perf_counter()
        run = load_run(suite_path)
        loaded_s = time.perf_counter() - started
        started = time.perf_counter()
        page = render_html(run, link_base=Path(tmp))
        render_s = time.perf_counter() - started
        size = len(page.encode("utf-8"))
        count = sum(len(t.executions) for t in run.suite.tests)
        print(f"| {count:,} | {run.suite_bytes / 1e6:.1f} MB | {size / 1e6:.1f} MB | {loaded_s:.2f} s | "
              f"{render_s:.2f} s | {len(naive) / 1e6:.1f} MB in {naive_s:.2f} s |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=1000)
    args = parser.parse_args()
    print("| trials | suite.json | HTML page | load run folder | render | floor: suite.json re-dumped |")
    print("| --- | --- | --- | --- | --- | --- |")
    for trials in sorted({200, args.trials}):
        measure(trials)


if __name__ == "__main__":
    main()
