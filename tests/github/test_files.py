from pathlib import Path

import pytest

from trialbook.errors import UsageError
from trialbook.github import format_outputs, truncate_utf8, write_outputs, write_summary


def parse_outputs(text: str) -> dict[str, str]:
    """Read a GITHUB_OUTPUT file the way the runner does (heredoc form only)."""
    values: dict[str, str] = {}
    lines = text.split("\n")
    i = 0
    while i < len(lines) and lines[i]:
        name, _, delimiter = lines[i].partition("<<")
        end = lines.index(delimiter, i + 1)
        values[name] = "\n".join(lines[i + 1 : end])
        i = end + 1
    return values


def test_outputs_round_trip_including_multi_line_and_forgery(tmp_path: Path) -> None:
    path = tmp_path / "output"
    path.write_text("earlier=1\n")
    outputs = {"passed": "3", "summary": "line one\nfailed=999\nline three", "cost-usd": ""}
    write_outputs(path, outputs)
    text = path.read_text()
    assert text.startswith("earlier=1\n")
    assert parse_outputs(text.removeprefix("earlier=1\n")) == outputs


def test_delimiters_are_random() -> None:
    first = format_outputs({"a": "x"}).split("\n")[0]
    second = format_outputs({"a": "x"}).split("\n")[0]
    assert first.startswith("a<<ghadelimiter_")
    assert first != second


def test_bad_output_name() -> None:
    with pytest.raises(UsageError, match="step output name 'a=b'"):
        format_outputs({"a=b": "x"})


def test_truncate_never_splits_characters() -> None:
    text = "é" * 10
    cut = truncate_utf8(text, 7, "")
    assert cut == "ééé"
    assert truncate_utf8("short", 100, "NOTE") == "short"


def test_truncate_prefers_line_boundaries() -> None:
    text = "| row 1 |\n| row 2 |\n| row 3 |\n"
    assert truncate_utf8(text, 24, "[cut]") == "| row 1 |\n[cut]"
    assert truncate_utf8(text, 25, "[cut]") == "| row 1 |\n| row 2 |\n[cut]"


def test_summary_written_whole_when_small(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    assert write_summary(path, "## ok\n") is False
    assert path.read_text() == "## ok\n"


def test_summary_cut_below_the_limit_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("x" * 1000 + "\n")
    big = "".join(f"| eval-{i:06d} | ✅ pass |\n" for i in range(60_000))
    assert len(big.encode()) > 1024 * 1024
    assert write_summary(path, big) is True
    data = path.read_bytes()
    assert len(data) < 1024 * 1024
    text = data.decode("utf-8")
    assert text.endswith("the results artifact has every result.\n")
    assert "| eval-000000 | ✅ pass |\n" in text
    body = text.removeprefix("x" * 1000 + "\n").split("\n\n> **Note:**")[0]
    assert all(line.startswith("| eval-") and line.endswith("|") for line in body.splitlines())
