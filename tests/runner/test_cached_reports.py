"""Reports of a run whose failure is cached: JUnit, the summary file and the history line's summary."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.masking import Masker
from trialbook.runner._history import (
    SUMMARY_ENTRIES,
    SUMMARY_LINE_CHARS,
    SUMMARY_LINES,
    cached_failures,
    failure_summary,
)

from .conftest import Invoke, write


def _broken(root: Path) -> None:
    write(root / "evals/prompts/broken.md", "```bash\ntouch made.txt\n```\n")
    write(
        root / "evals/broken.eval.yaml",
        """
        prompt: prompts/broken.md
        agents: [literal]
        assert:
          - file_exists: elsewhere.txt
        """,
    )


def test_junit_and_the_summary_count_a_cached_failure_with_the_recorded_reason(
    invoke: Invoke, tmp_path: Path
) -> None:
    _broken(tmp_path)
    args = ("eval", "evals", "--history-dir", "history", "--junit", "junit.xml", "--summary", "summary.md")
    first = invoke(*args)
    assert first.exit_code == 1, first.output
    (line,) = [json.loads(text) for text in (tmp_path / "history/broken.jsonl").read_text().splitlines()]
    assert any("elsewhere.txt" in reason for reason in line["extra"]["failures"])

    again = invoke(*args)
    assert again.exit_code == 1, again.output
    assert "cached (fail)" in again.output
    root = ET.parse(tmp_path / "junit.xml").getroot()
    failures = root.findall("./testcase/failure")
    assert root.get("failures") == str(len(failures)) == "1"
    assert "elsewhere.txt" in (failures[0].text or "")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert (props["cached_verdict"], props["cached_started_at"]) == ("fail", line["started_at"])

    summary = (tmp_path / "summary.md").read_text()
    assert "**1 failed (1 cached)**" in summary
    assert "elsewhere.txt" in summary.split("### What failed")[1]

    report = invoke("report", ".trialbook/runs/latest")
    assert report.exit_code == 0, report.output
    assert "1 failed (1 cached)" in report.output and "elsewhere.txt" in report.output


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.text(alphabet="ab \n", max_size=400), max_size=9),
    st.integers(0, 400),
    st.integers(0, 8),
)
def test_the_failure_summary_is_bounded_and_masked_before_it_is_cut(
    texts: list[str], at: int, which: int
) -> None:
    secret = "SECRETVALUE42"
    failures = list(texts) or [""]
    target = failures[which % len(failures)]
    failures[which % len(failures)] = target[:at] + secret + target[at:]
    summary = failure_summary(failures, Masker([secret]).text)
    kept = summary.get("failures", [])
    assert isinstance(kept, list) and len(kept) <= SUMMARY_ENTRIES
    for entry in kept:
        lines = entry.splitlines()
        assert 0 < len(lines) <= SUMMARY_LINES
        assert all(len(line) <= SUMMARY_LINE_CHARS for line in lines)
        # Masked whole, then cut: not even the first four characters of the secret are left.
        assert "SECR" not in entry
    assert summary.get("failures_omitted", 0) == max(len(failures) - SUMMARY_ENTRIES, 0)
    assert cached_failures(HistoryLineLike(summary))[: len(kept)] == tuple(kept)


class HistoryLineLike:
    def __init__(self, extra: dict[str, object]) -> None:
        self.extra = extra


def test_a_hand_edited_failure_summary_of_the_wrong_type_is_ignored() -> None:
    extras: list[dict[str, object]] = [
        {"failures": "one string"},
        {"failures": [1, 2]},
        {"failures": None},
        {},
    ]
    for extra in extras:
        assert cached_failures(HistoryLineLike(extra)) == ()
