"""The explanation of a failed trial attacked: any output, any secret, huge logs, a CLI agent's stderr."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.assertions import Call
from trialbook.evidence import AgentResult, AssertionRecord, ToolCall
from trialbook.masking import Masker
from trialbook.runner._explain import LINE_CHARS, LONG_TAIL, SHORT_TAIL, explain_trial, trial_failures

FAILED = AssertionRecord("file_exists", 'file_exists "x"', False, "x exists", "x was not found")


def _result(output: str, *, success: bool = True, error: str | None = None) -> AgentResult:
    step = ToolCall("step-1", "bash", {"command": "make"}, True, False, output, "exit code 1")
    return AgentResult(
        agent_name="literal",
        agent_version=None,
        success=success,
        error=error,
        stop_reason="completed" if success else "execution_error",
        all_tool_calls=(step,),
    )


@settings(max_examples=80, deadline=None)
@given(
    output=st.text(st.characters(exclude_categories=["Cs"]), max_size=3000),
    secret=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=8, max_size=40),
    cut=st.integers(min_value=0, max_value=400),
)
def test_no_part_of_a_secret_survives_and_every_part_is_bounded(output: str, secret: str, cut: int) -> None:
    """The secret is put where a cut would split it (at ``cut`` characters into a line)."""
    text = output + "\n" + "y" * cut + secret + "z" * 50 + "\n" + output
    explained = explain_trial(_result(text), [FAILED], (), Masker([secret]))
    every = [explained.headline, *explained.evidence, *explained.brief]
    for line in every:
        assert secret not in line
        assert "y" + secret[:4] not in line  # the planted copy is masked whole, never cut in half
        assert len(line) <= LINE_CHARS + 8
    assert sum(1 for line in explained.evidence if line.startswith("  | ")) <= LONG_TAIL
    assert sum(1 for line in explained.brief if line.startswith("| ")) <= SHORT_TAIL


def test_a_cli_agents_stderr_tail_is_read_from_its_log_and_bounded(tmp_path: Path) -> None:
    log = tmp_path / "claude.stderr.log"
    log.write_text("".join(f"warming up {n}\n" for n in range(200_000)) + "Error: 401 Unauthorized\n")
    result = AgentResult(
        agent_name="claude-code",
        agent_version=None,
        success=False,
        error="claude exited with code 1: Error: 401 Unauthorized",
        stop_reason="execution_error",
    )
    explained = explain_trial(result, [], (), Masker(), folder=tmp_path)
    assert explained.headline == "claude exited with code 1: Error: 401 Unauthorized"
    assert "claude.stderr.log ends with:" in explained.evidence
    assert explained.evidence[-1] == "  | Error: 401 Unauthorized"
    assert len(explained.evidence) <= LONG_TAIL + 1
    assert explained.brief[-1] == "claude.stderr.log: Error: 401 Unauthorized"


def test_calls_show_exit_codes_killed_and_shim_errors_once_per_trial() -> None:
    calls = (
        Call(("vendor", "init"), "/w", 0, 1.0, 1.0),
        Call(("vendor", "deploy"), "/w", None, 2.0, None),
        Call(("gh", "auth"), "/w", 127, 3.0, 1.0, error="gh: not found on PATH"),
    )
    ran = AssertionRecord(
        "ran",
        'ran "vendor verify"',
        False,
        "a call",
        "no call matched; calls seen (3):\n  1. vendor init (exit 0)",
    )
    not_ran = AssertionRecord(
        "not_ran",
        'not_ran "gh"',
        False,
        "no call",
        "matched:\n  3. gh auth (shim error: gh: not found on PATH)",
    )
    explained = explain_trial(_result(""), [ran, not_ran], calls, Masker())
    assert explained.headline == "2 checks failed"
    assert explained.more_checks == 2
    assert explained.brief[:2] == ('ran "vendor verify": no call matched', 'not_ran "gh": expected no call')
    assert explained.brief[-1] == (
        "calls (3): 1. vendor init (exit 0) · 2. vendor deploy (killed) · "
        "3. gh auth (shim error: gh: not found on PATH)"
    )
    lines = trial_failures(1, _result(""), [ran, not_ran], explained, timeout_s=60)
    assert (
        lines[0]
        == 'trial 1: ran "vendor verify": no call matched\n  calls seen (3):\n    1. vendor init (exit 0)'
    )
    assert sum(text.count("calls seen") + text.count("calls (") for text in lines) == 1
