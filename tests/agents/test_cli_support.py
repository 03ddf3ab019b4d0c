"""What the CLI adapters share: option checks, binary lookup, version memo, environment, masking, sweeping."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.sandbox.procs import running
from trialbook.agents import AgentSpec
from trialbook.agents._cli_run import RUN_MARKER, sweep
from trialbook.agents._cli_support import (
    Options,
    build_env,
    find_binary,
    masker_for,
    probe_version,
    secret_values,
)
from trialbook.errors import ConfigError
from trialbook.evidence import JsonValue


def _options(**values: JsonValue) -> Options:
    return Options(
        AgentSpec("claude-code", values, source="evals/setup.yaml:4"),
        ("model", "max_turns", "args", "env", "audit_requests"),
    )


def test_an_unknown_option_names_the_file_the_key_and_what_is_accepted() -> None:
    with pytest.raises(ConfigError) as caught:
        _options(max_turn=3)
    message = str(caught.value)
    assert message.startswith("evals/setup.yaml:4: agent 'claude-code': max_turn: unknown option")
    assert "args, audit_requests, env, max_turns, model" in message


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({"max_turns": "3"}, "max_turns"),
        ({"max_turns": 0}, "max_turns"),
        ({"max_turns": True}, "max_turns"),
        ({"model": ""}, "model"),
        ({"args": "--flag"}, "args"),
        ({"args": ["--x", 3]}, "args"),
        ({"env": {"A": 1}}, "env"),
        ({"env": ["A=1"]}, "env"),
        ({"audit_requests": "true"}, "audit_requests"),
        ({"audit_requests": 1}, "audit_requests"),
    ],
)
def test_bad_option_values_are_config_errors(values: dict[str, JsonValue], key: str) -> None:
    options = _options(**values)
    read = {
        "max_turns": options.positive_int,
        "model": options.string,
        "args": options.strings,
        "audit_requests": options.flag,
    }
    with pytest.raises(ConfigError, match=f": {key}: expected"):
        read[key](key) if key in read else options.env()


def test_good_option_values_come_back_typed() -> None:
    options = _options(model="sonnet", max_turns=4, args=["--x", "y"], env={"A": "1"})
    assert options.string("model") == "sonnet"
    assert options.positive_int("max_turns") == 4
    assert options.strings("args") == ("--x", "y")
    assert options.env() == {"A": "1"}
    assert _options().positive_int("max_turns") is None
    assert _options(audit_requests=True).flag("audit_requests") is True
    assert _options().flag("audit_requests") is False


def test_a_missing_binary_says_which_package_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    path, reason = find_binary(None, "claude", "@anthropic-ai/claude-code")
    assert path is None
    assert reason is not None
    assert "npm install -g @anthropic-ai/claude-code" in reason
    path, reason = find_binary(str(tmp_path / "nope"), "claude", "@anthropic-ai/claude-code")
    assert path is None
    assert "binary option" in (reason or "")


def _fake_cli(path: Path, version: str, counter: Path) -> None:
    path.write_text(f'#!/bin/sh\necho x >> "{counter}"\necho "{version} (Claude Code)"\n')
    path.chmod(0o755)


def test_the_version_probe_runs_once_per_binary_file(tmp_path: Path) -> None:
    binary, counter = tmp_path / "claude", tmp_path / "count"
    _fake_cli(binary, "9.9.9", counter)
    pattern = r"^(\S+) \(Claude Code\)"
    assert probe_version(binary, ["--version"], pattern, {}) == "9.9.9"
    assert probe_version(binary, ["--version"], pattern, {}) == "9.9.9"
    assert len(counter.read_text().splitlines()) == 1
    _fake_cli(binary, "9.9.10", counter)  # an upgrade in place: another size
    assert probe_version(binary, ["--version"], pattern, {}) == "9.9.10"
    assert len(counter.read_text().splitlines()) == 2


def test_the_environment_passes_only_documented_runner_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "runner-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
    monkeypatch.setenv("UNRELATED_SECRET", "nope")
    env = build_env(
        passthrough=("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        option_env={
            "ANTHROPIC_BASE_URL": "http://127.0.0.1:2",
            "TOKEN": "{{ secrets.TOKEN }}",
            "LITERAL": "a",
        },
        task_env={"PATH": "/shims:/usr/bin", "ANTHROPIC_API_KEY": "task-key"},
        fixed={"HOME": "/trial/home"},
        defaults={"CLAUDE_CODE_MAX_RETRIES": "2", "LITERAL": "default"},
    )
    assert env == {
        "ANTHROPIC_API_KEY": "task-key",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:2",
        "LITERAL": "a",
        "PATH": "/shims:/usr/bin",
        "CLAUDE_CODE_MAX_RETRIES": "2",
        "HOME": "/trial/home",
    }


def test_secret_looking_values_are_masked() -> None:
    env = {"ANTHROPIC_API_KEY": "sk-abcdef", "GH_TOKEN": "ghp_123456", "PATH": "/usr/bin", "SHORT_KEY": "ab"}
    assert set(secret_values(env)) == {"sk-abcdef", "ghp_123456"}
    assert masker_for(env).text("key sk-abcdef and ghp_123456 on /usr/bin") == "key *** and *** on /usr/bin"


def test_sweep_kills_marked_processes_even_in_another_session() -> None:
    marked = subprocess.Popen(
        ["sleep", "300"], env={**os.environ, RUN_MARKER: "abc123"}, start_new_session=True
    )
    other = subprocess.Popen(
        ["sleep", "300"], env={**os.environ, RUN_MARKER: "other"}, start_new_session=True
    )
    try:
        environ = Path(f"/proc/{marked.pid}/environ")
        for _ in range(3000):  # until sleep has been exec'd with its own environment
            if f"{RUN_MARKER}=abc123".encode() in environ.read_bytes():
                break
            time.sleep(0.01)
        assert sweep("abc123") == 1
        # The sweep reaps what it killed, so the status Popen sees may be its own fallback (0).
        marked.wait(timeout=30)
        assert not running(marked.pid)
        assert other.poll() is None
    finally:
        for process in (marked, other):
            process.kill()
            process.wait()
