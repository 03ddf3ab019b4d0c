"""Agent output with terminal control sequences is shown as text on the terminal, never run by it."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from trialbook.report.terminal import visible

from ..runner.conftest import Invoke, invoke

__all__ = ["invoke"]

# A window title, a colour, a bell, a screen clear and a carriage return that would overwrite the line.
HOSTILE = r"printf 'title\033]0;pwned\007 red\033[31mX bell\007 clear\033[2J cr\rgone\n'; exit 3"


def test_esc_bel_and_cr_in_agent_output_reach_the_terminal_written_out(
    invoke: Invoke, tmp_path: Path
) -> None:
    text = f"prompt_text: hi\nagents:\n  - name: s\n    script: |\n      {HOSTILE}\n"
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/e.eval.yaml").write_text(text)
    result = invoke("eval", "evals")
    assert result.exit_code == 1
    for raw in ("\x1b", "\x07", "\r"):
        assert raw not in result.output, repr(raw)
    assert "\\x1b]0;pwned\\x07" in result.output  # the evidence is still there to read


@given(st.text())
def test_no_control_character_but_newline_and_tab_survives_and_printable_text_is_unchanged(text: str) -> None:
    shown = visible(text)
    assert all(ch in "\n\t" or not (ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F) for ch in shown)
    if all(ch in "\n\t" or ch.isprintable() for ch in text):
        assert shown == text
