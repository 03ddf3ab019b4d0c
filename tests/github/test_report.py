from trialbook.github import action_outputs, failure_annotations
from trialbook.report.markdown import BaseResult, ReviewRow


def row(eval_id: str, passed: int, verdict: str, base: BaseResult | None = None) -> ReviewRow:
    return ReviewRow(
        eval_id=eval_id,
        agent="claude-code",
        passed=passed,
        trials=3,
        verdict=verdict,
        base=base,
        cost_usd=None,
        duration_s=None,
    )


def test_outputs_keep_unknown_cost_empty() -> None:
    outputs = action_outputs(passed=2, failed=1, cached=4, cost_usd=None, summary="## x\n")
    assert outputs == {"passed": "2", "failed": "1", "cached": "4", "cost-usd": "", "summary": "## x\n"}
    assert action_outputs(passed=0, failed=0, cached=0, cost_usd=0.0, summary="")["cost-usd"] == "0.0000"
    assert action_outputs(passed=0, failed=0, cached=0, cost_usd=1.23456, summary="")["cost-usd"] == "1.2346"


def test_failure_annotations_point_at_eval_files() -> None:
    rows = [
        row("setup/neon", 0, "fail", BaseResult(passed=3, trials=3, verdict="pass")),
        row("ok", 3, "pass"),
        row("flaky", 1, "error"),
    ]
    commands = failure_annotations(
        rows, {"setup/neon": "evals/setup/neon.eval.yaml"}, lines={"setup/neon": 12}
    )
    assert commands == [
        "::error file=evals/setup/neon.eval.yaml,line=12,title=setup/neon × claude-code%3A fail"
        "::0/3 trials passed (fail, regressed from 3/3). "
        "The job summary and the results artifact have the transcripts.",
        "::error title=flaky × claude-code%3A error"
        "::1/3 trials passed (error). The job summary and the results artifact have the transcripts.",
    ]


def test_failure_annotations_are_capped() -> None:
    rows = [row(f"e{i}", 0, "fail") for i in range(12)]
    commands = failure_annotations(rows, {}, limit=10)
    assert len(commands) == 11
    assert commands[-1] == "::error::2 more evals did not pass; see the job summary."
