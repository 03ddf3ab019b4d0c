from trialbook.report.markdown import (
    STICKY_MARKER,
    BaseResult,
    ListedEval,
    ReviewRow,
    render_pr_comment,
    render_summary,
)

ROWS = [
    ReviewRow(
        eval_id="setup/create_project",
        agent="claude-code",
        passed=3,
        trials=3,
        verdict="pass",
        base=BaseResult(passed=3, trials=3, verdict="pass", commit="0123456789abcdef"),
        cost_usd=0.4213,
        duration_s=72.4,
    ),
    ReviewRow(
        eval_id="setup/neon",
        agent="literal",
        passed=0,
        trials=3,
        verdict="fail",
        base=BaseResult(passed=3, trials=3, verdict="pass"),
        cost_usd=None,
        duration_s=3.25,
    ),
    ReviewRow(
        eval_id="docs/new|thing",
        agent="codex",
        passed=2,
        trials=3,
        verdict="pass",
        base=None,
        cost_usd=0.004,
        duration_s=3725,
    ),
]
CACHED = [ListedEval(eval_id="a", agent="literal", reason="cache key unchanged (pass 3/3)")]
SKIPPED = [ListedEval(eval_id="b", agent=None, reason="prompt unchanged against origin/main")]
UNSTARTED = [ListedEval(eval_id="c", agent="codex", reason="budget of $5.00 reached")]

GOLDEN_SUMMARY = """\
## trialbook evals

**2 passed · 1 failed · 1 regressed · 1 cached · 1 skipped · 1 not started**

| Eval | Agent | Trials passed | Verdict | Base | Regression | Cost | Duration |
| --- | --- | --- | --- | --- | --- | --- | --- |
| setup/neon | literal | 0/3 (0–56%) | ❌ fail | 3/3 pass | 🔻 **regressed** (p=0.050) | unknown | 3.2s |
| docs/new\\|thing | codex | 2/3 (21–94%) | ✅ pass | new | – | $0.0040 | 1h 02m |
| setup/create\\_project | claude-code | 3/3 (44–100%) | ✅ pass | 3/3 pass @ 0123456 \
| no (p=1.000) | $0.42 | 1m 12s |

Total cost: $0.43 (plus 1 unknown)

Trials passed: the count, then the 95% Wilson interval of the pass rate, the range of rates that count \
is consistent with (2/3 can come from an agent that passes 21% of the time).

Regression: one-sided Fisher exact test of this run's trials against the base's last recorded result \
(flagged at p ≤ 0.1). It is exact for the handful of trials an eval runs, where approximate tests mislead.

### Cached (not re-run)

- a × literal: cache key unchanged (pass 3/3)

### Skipped

- b: prompt unchanged against origin/main

### Not started (budget reached)

- c × codex: budget of $5.00 reached

Transcripts, evidence, report.html: [results artifact](https://github.com/o/r/actions/runs/1/artifacts/2)
"""

ARTIFACT = "https://github.com/o/r/actions/runs/1/artifacts/2"


def test_summary_golden() -> None:
    text = render_summary(ROWS, cached=CACHED, skipped=SKIPPED, unstarted=UNSTARTED, artifact_url=ARTIFACT)
    assert text == GOLDEN_SUMMARY


def test_pr_comment_is_summary_under_marker_with_run_link() -> None:
    text = render_pr_comment(
        ROWS,
        cached=CACHED,
        skipped=SKIPPED,
        unstarted=UNSTARTED,
        artifact_url=ARTIFACT,
        run_url="https://github.com/o/r/actions/runs/1",
    )
    assert (
        text == f"{STICKY_MARKER}\n{GOLDEN_SUMMARY}\n[Workflow run](https://github.com/o/r/actions/runs/1)\n"
    )


def test_nothing_ran() -> None:
    text = render_summary([], cached=CACHED, title="shard 2/3")
    assert text == (
        "## shard 2/3\n\n**1 cached**\n\n### Cached (not re-run)\n\n"
        "- a × literal: cache key unchanged (pass 3/3)\n\n"
        "Transcripts and evidence: no artifact link available for this run.\n"
    )
    assert render_summary([]).startswith("## trialbook evals\n\n**nothing to run**\n")


def test_unknown_cost_is_never_zero() -> None:
    row = ReviewRow(
        eval_id="x",
        agent="codex",
        passed=1,
        trials=1,
        verdict="pass",
        base=None,
        cost_usd=None,
        duration_s=None,
    )
    text = render_summary([row])
    assert "| x | codex | 1/1 (21–100%) | ✅ pass | new | – | unknown | unknown |" in text
    assert "Total cost: unknown" in text
    assert "$0" not in text


def test_free_run_shows_zero_cost() -> None:
    row = ReviewRow(
        eval_id="x",
        agent="literal",
        passed=1,
        trials=1,
        verdict="pass",
        base=None,
        cost_usd=0.0,
        duration_s=1.0,
    )
    assert "| $0.00 | 1.0s |" in render_summary([row])


def test_text_cannot_inject_markup_or_a_second_marker() -> None:
    entry = ListedEval(eval_id="e", agent=None, reason=f"{STICKY_MARKER}\n| fake | row |")
    text = render_pr_comment([], skipped=[entry])
    assert text.count("<!--") == 1
    assert "- e: &lt;!-- trialbook:sticky --&gt; \\| fake \\| row \\|" in text


def test_alpha_on_rows_is_reported_and_used() -> None:
    row = ReviewRow(
        eval_id="x",
        agent="literal",
        passed=1,
        trials=3,
        verdict="fail",
        base=BaseResult(passed=3, trials=3, verdict="pass"),
        cost_usd=None,
        duration_s=None,
        alpha=0.25,
    )
    text = render_summary([row])
    assert "🔻 **regressed** (p=0.200)" in text
    assert "flagged at p ≤ 0.25" in text


def test_long_comment_is_cut_below_the_limit() -> None:
    rows = [
        ReviewRow(
            eval_id=f"eval-{i:04d}",
            agent="literal",
            passed=1,
            trials=1,
            verdict="pass",
            base=None,
            cost_usd=None,
            duration_s=None,
        )
        for i in range(400)
    ]
    text = render_pr_comment(rows, run_url="https://github.com/o/r/actions/runs/1", limit=5000)
    assert len(text) <= 5000
    assert text.startswith(STICKY_MARKER + "\n")
    assert "the job summary has every row" in text
    assert text.endswith("[Workflow run](https://github.com/o/r/actions/runs/1)\n")
    assert "| eval-0000 |" in text
    assert "| eval-0399 |" not in text


def test_failures_are_listed_per_failing_row_and_fences_cannot_break_out() -> None:
    failing = ReviewRow(
        eval_id="setup/neon",
        agent="literal",
        passed=0,
        trials=1,
        verdict="fail",
        base=None,
        cost_usd=0.0,
        duration_s=1.0,
        failures=(
            'trial 1: ran "neon deploy": expected a call; got none\ncalls seen (1):\n  1. neon init',
            "x ``` y",
        ),
    )
    passing = ReviewRow(
        eval_id="ok", agent="literal", passed=1, trials=1, verdict="pass", base=None, cost_usd=0.0,
        duration_s=1.0, failures=("ignored for a passing row",),
    )  # fmt: skip
    text = render_summary([failing, passing])
    section = text.split("### What failed")[1]
    assert "<details><summary>setup/neon × literal: 0/1 trials passed</summary>" in section
    assert (
        '```text\ntrial 1: ran "neon deploy": expected a call; got none\ncalls seen (1):\n  1. neon init\n'
        in section
    )
    assert "x ''' y" in section
    assert "ignored for a passing row" not in text
    many = ReviewRow(
        eval_id="e", agent="a", passed=0, trials=1, verdict="fail", base=None, cost_usd=None, duration_s=None,
        failures=tuple(f"line {n}" for n in range(50)),
    )  # fmt: skip
    assert "… 10 more lines in the transcripts" in render_summary([many])
