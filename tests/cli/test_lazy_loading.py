"""Commands load on first use: ``--help`` imports none, and a run loads no agent SDK it does not use."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click

from trialbook.cli import _COMMANDS, cli

CLI_FOLDER = Path(__file__).resolve().parents[2] / "src/trialbook/cli"

# Runs trialbook's CLI with the given arguments, then prints (to stderr, last line) the loaded modules.
_PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))\n"
    "from trialbook.cli import main\n"
    "main()\n"
)


def _loaded_modules(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return done, modules


def test_help_imports_no_command_module(tmp_path: Path) -> None:
    done, modules = _loaded_modules("--help", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "eval " in done.stdout and "view " in done.stdout
    commands = [m for m in modules if m.startswith("trialbook.cli.") and m.endswith("_cmd")]
    assert commands == []
    assert "trialbook.runner" not in modules
    assert "pygit2" not in modules


def test_a_command_loads_only_itself(tmp_path: Path) -> None:
    done, modules = _loaded_modules("schema", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["$schema"]
    commands = [m for m in modules if m.startswith("trialbook.cli.") and m.endswith("_cmd")]
    assert commands == ["trialbook.cli.schema_cmd"]


def test_a_script_agent_run_loads_no_copilot_sdk(tmp_path: Path) -> None:
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "ok.eval.yaml").write_text(
        "prompt_text: write ok\n"
        "agents: [{name: bench, script: 'echo ok > out.txt'}]\n"
        "assert:\n  - file_contains: {path: out.txt, pattern: ok}\n"
    )
    args = ("eval", str(evals), "--unsafe-local", "--results-dir", str(tmp_path / "results"))
    done, modules = _loaded_modules(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1" in done.stdout
    # The negative control: the SDK is importable here, so its absence is trialbook's doing.
    assert subprocess.run([sys.executable, "-c", "import copilot"], check=False).returncode == 0
    assert [m for m in modules if m.split(".")[0] == "copilot"] == []
    adapters = ("trialbook.agents.claude_code", "trialbook.agents.codex", "trialbook.agents.copilot")
    assert [m for m in modules if m.startswith(adapters)] == []


def test_every_command_module_is_registered() -> None:
    defined = sorted(path.stem for path in CLI_FOLDER.glob("*_cmd.py"))
    registered = sorted(entry.target.partition(":")[0].lstrip(".") for entry in _COMMANDS.values())
    assert registered == defined


def test_the_listed_summaries_are_the_commands_own() -> None:
    for name, entry in _COMMANDS.items():
        command = cli.commands[name]
        assert command.help is not None
        assert entry.summary == command.help.split("\n\n")[0].replace("\n", " "), name
        for limit in (30, 45, 60, 94):
            stand_in = click.Command(name, help=entry.summary)
            assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)
