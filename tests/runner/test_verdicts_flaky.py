"""A PR failure of a known-flaky eval, end to end: within the usual range, or a regression."""

from __future__ import annotations

import json
from pathlib import Path

from tests.history.helpers import line
from tests.scoring.test_flaky import SIXTY

from .conftest import Invoke, write

PR = {"GITHUB_REF": "refs/pull/5/merge", "GITHUB_EVENT_NAME": "pull_request"}


def _flaky_history(root: Path) -> None:
    lines = [
        line(
            "flaky",
            "fake",
            minutes=m,
            passed=passed,
            trials=3,
            pass_rate=passed / 3,
            threshold=0.67,
            verdict="pass" if passed >= 2 else "fail",
            commit=f"{m:040x}",
            extra={"ref": "refs/heads/main"},
        )
        for m, passed in enumerate(SIXTY)
    ]
    folder = root / "history"
    folder.mkdir()
    (folder / "flaky.jsonl").write_text("".join(item.to_json_line() + "\n" for item in lines))


def _eval(root: Path, trials: int, script: str) -> None:
    write(
        root / "evals/flaky.eval.yaml",
        f"""
        prompt_text: make done.txt
        agents: [{{name: fake, script: {json.dumps(script)}}}]
        trials: {trials}
        pass_rate: 0.67
        assert:
          - file_exists: done.txt
        """,
    )


def test_one_of_three_is_within_the_usual_range_of_a_sixty_percent_eval(
    invoke: Invoke, tmp_path: Path
) -> None:
    _flaky_history(tmp_path)
    counter = tmp_path / "count"
    # Passes its first trial only: 1/3.
    _eval(
        tmp_path,
        3,
        f"n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; "
        "[ $n -eq 0 ] && touch done.txt; true",
    )
    result = invoke(
        "eval", "evals", "--history-dir", "history", "--summary", "summary.md", "--concurrency", "1", env=PR
    )
    assert result.exit_code == 1, result.output
    assert "1/3 (6–79%)" in result.output
    assert "within the usual range of a flaky eval (36/60 over 20 base runs" in result.output
    summary = (tmp_path / "summary.md").read_text()
    assert "flaky: 36/60 (47–71%) over 20 runs" in summary
    assert "no, within the usual range (p=" in summary
    assert "regressed" not in summary.split("### Flaky or changed")[0].split("| --- |")[-1]
    assert "flaky × fake: flaky, 36/60 (47–71%) trials passed over the last 20 base-branch runs" in summary


def test_zero_of_ten_is_a_regression_even_for_a_flaky_eval(invoke: Invoke, tmp_path: Path) -> None:
    _flaky_history(tmp_path)
    _eval(tmp_path, 10, "true")
    result = invoke("eval", "evals", "--history-dir", "history", "--summary", "summary.md", env=PR)
    assert result.exit_code == 1, result.output
    assert "regressed against a flaky eval's 36/60 over 20 base runs" in result.output
    assert "🔻 **regressed**" in (tmp_path / "summary.md").read_text()


def test_history_flaky_lists_the_eval_with_class_and_interval(invoke: Invoke, tmp_path: Path) -> None:
    _flaky_history(tmp_path)
    result = invoke("history", "--history-dir", "history", "--flaky")
    assert result.exit_code == 0, result.output
    row = next(text for text in result.output.splitlines() if text.startswith("flaky"))
    assert "36/60 (47–71%)" in row and " flaky " in row
    as_json = json.loads(invoke("history", "--history-dir", "history", "--flaky", "--json").output)
    assert [(s["id"], s["stability"], s["passed"], s["trials"]) for s in as_json] == [
        ("flaky", "flaky", 36, 60)
    ]
