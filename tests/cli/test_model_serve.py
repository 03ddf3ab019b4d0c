"""`trialbook model serve`: the loopback model from the command line, and its replies file refused clearly."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.cli import cli
from trialbook.errors import ConfigError
from trialbook.testing import load_replies

TRIALBOOK = Path(sys.executable).parent / "trialbook"
REPLIES = "replies:\n  - run: echo hi > hi.txt\n  - say: Done.\nwhen:\n  'Use pnpm':\n    - say: pnpm it is\n"


def _wait_for(path: Path, process: subprocess.Popen[str], deadline_s: float = 60) -> str:
    """The file's text once the server wrote it (the event), or the server's output if it ended first."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if path.exists():
            return path.read_text()
        if process.poll() is not None:
            raise AssertionError(process.communicate()[0])
        time.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


def _ask(base: str, key: str, text: str) -> str:
    body = {"model": "m", "max_tokens": 10, "stream": True, "messages": [{"role": "user", "content": text}]}
    headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
    reply = httpx.post(f"{base}/v1/messages", json=body, headers=headers, timeout=30)
    reply.raise_for_status()
    return reply.text


def test_serve_answers_from_the_replies_file_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text(REPLIES)
    process = subprocess.Popen(
        [str(TRIALBOOK), "model", "serve", "--replies", "replies.yaml", "--env-file", "model.env"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        settings_ = dict(line.split("=", 1) for line in _wait_for(tmp_path / "model.env", process).split())
        base, key = settings_["ANTHROPIC_BASE_URL"], settings_["ANTHROPIC_API_KEY"]
        assert base.startswith("http://127.0.0.1:")
        first = _ask(base, key, "set it up")
        assert '"name": "Bash"' in first and "echo hi > hi.txt" in first
        assert "pnpm it is" in _ask(base, key, "Use pnpm to set it up")
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=60)
    assert process.returncode == 0, output
    assert f"ANTHROPIC_BASE_URL={base} ANTHROPIC_API_KEY={key}" in output
    assert "codex        agent option base_url: " + base + "/v1" in output
    assert output.rstrip().endswith("stopped after 2 model request(s)")
    assert "Traceback" not in output


def test_a_taken_port_is_refused_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text(REPLIES)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(
            cli, ["model", "serve", "--replies", str(tmp_path / "replies.yaml"), "--port", str(port)]
        )
    assert result.exit_code == 2
    assert f"cannot listen on 127.0.0.1:{port}" in result.output and "pick another --port" in result.output


def test_a_wrong_replies_file_names_the_file_the_field_and_the_fix(tmp_path: Path) -> None:
    cases = {
        "replies: []\n": "replies: expected a non-empty list of replies",
        "replies:\n  - {run: ls, say: hi}\n": "replies[0]: a reply has exactly one of run, say, tool, hang",
        "replies:\n  - {say: hi, colour: red}\n": "replies[0].colour: unknown key",
        "replies:\n  - {say: hi, input_tokens: -1}\n": "replies[0].input_tokens: expected a whole number",
        "replies:\n  - {hang: yes please}\n": "replies[0].hang: expected true",
        "answers: []\n": "replies: is missing",
        "replies: [{say: hi}]\nwhen: {pnpm: []}\n": "when.pnpm: expected a non-empty list",
        "replies: [\n": "not valid YAML",
    }
    for text, expected in cases.items():
        path = tmp_path / "replies.yaml"
        path.write_text(text)
        result = CliRunner().invoke(cli, ["model", "serve", "--replies", str(path)])
        assert result.exit_code == 2, (text, result.output)
        assert f"error: {path}: " in result.output and expected in result.output, (text, result.output)
        assert "Traceback" not in result.output
    missing = CliRunner().invoke(cli, ["model", "serve", "--replies", str(tmp_path / "none.yaml")])
    assert missing.exit_code == 2 and "cannot read the replies file" in missing.output


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
_keys = st.sampled_from(["replies", "when", "run", "say", "tool", "hang", "arguments", "input_tokens", "x"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_keys, _json | st.lists(st.dictionaries(_keys, _json, max_size=3), max_size=3)))
def test_any_document_is_a_script_or_a_clear_error(
    tmp_path_factory: pytest.TempPathFactory, document: object
) -> None:
    path = tmp_path_factory.mktemp("replies") / "r.yaml"
    path.write_text(yaml.safe_dump(document))
    message = None
    try:
        script = load_replies(path)
    except ConfigError as exc:  # the only way a wrong document may end: never another exception
        message = str(exc)
    if message is not None:
        assert message.startswith(f"{path}: ")
    else:
        assert script.replies and json.dumps([t.text for t in script.replies]) is not None
