"""Through the real CLI: values under names that merely contain ``AUTH`` stay readable; credentials do not."""

from __future__ import annotations

from pathlib import Path

from .conftest import Invoke, write

KEY = "sk-live-0123456789abcdef"


def test_an_author_name_a_socket_path_and_an_auth_mode_stay_readable_while_the_key_is_masked(
    invoke: Invoke, tmp_path: Path
) -> None:
    write(
        tmp_path / "evals/names.eval.yaml",
        f"""
        prompt_text: "Say who you are."
        agents:
          - name: who
            script: |
              echo "author=$GIT_AUTHOR_NAME sock=$SSH_AUTH_SOCK mode=$AUTH_MODE key=$OPENAI_API_KEY"
            env:
              GIT_AUTHOR_NAME: "Ada Lovelace"
              SSH_AUTH_SOCK: "/tmp/ssh-agent.sock"
              AUTH_MODE: "device"
              OPENAI_API_KEY: "{KEY}"
        assert:
          - succeeds: {{command: "echo checked by Ada Lovelace; exit 1"}}
        """,
    )
    result = invoke("eval", "evals", "--results-dir", "results", "--summary", "summary.md")
    assert result.exit_code == 1, result.output
    written = {
        str(path): path.read_text(errors="replace")
        for path in (tmp_path / "results").rglob("*")
        if path.is_file()
    }
    written["summary.md"] = (tmp_path / "summary.md").read_text()
    written["terminal"] = result.output
    assert [place for place, text in written.items() if KEY in text] == []
    said = "author=Ada Lovelace sock=/tmp/ssh-agent.sock mode=device key=***"
    assert any(said in text for text in written.values()), written
    assert "checked by Ada Lovelace" in (tmp_path / "results/suite.json").read_text()
