"""Commands load on first use: ``--help`` imports none, and a run loads only what it uses.

A local run of a script agent needs no git library (unless it reads or writes a history branch or
compares against a base), no XML or HTML rendering (unless asked for JUnit or a report), no installed
distributions' metadata (unless it names a registered agent), no agent SDK, nothing of pytest, and no
check kind, Python eval file machinery or template hashing its evals do not use. Each absence is checked
next to a run that does use the module, so the probe is known to see it.
"""

from __future__ import annotations

import json
import os
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
    assert "importlib.metadata" not in modules  # the version is a constant, not read from metadata


def test_version_reads_no_distribution_metadata(tmp_path: Path) -> None:
    from importlib.metadata import version

    done, modules = _loaded_modules("--version", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"trialbook {version('trialbook')}"  # the installed metadata agrees
    assert "importlib.metadata" not in modules


def test_a_command_loads_only_itself(tmp_path: Path) -> None:
    done, modules = _loaded_modules("schema", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["$schema"]
    commands = [m for m in modules if m.startswith("trialbook.cli.") and m.endswith("_cmd")]
    assert commands == ["trialbook.cli.schema_cmd"]


# Loaded by no local run of a script agent: (module, what it is for).
_NOT_FOR_A_LOCAL_RUN = {
    "pygit2": "history branches, --changed",
    "trialbook.history._git": "the history branch store",
    "trialbook.select._git": "--changed",
    "importlib.metadata": "registered agents",
    "email": "importlib.metadata's parser",
    "xml.etree.ElementTree": "--junit",
    "trialbook.report.junit": "--junit",
    "trialbook.report.html": "the viewer",
    "jinja2": "the viewer",
    "jsonschema": "tests only",
    "hypothesis": "tests only",
    "pytest": "the pytest plugin",
    "trialbook.pytest_plugin": "the pytest plugin",
    "copilot": "the Copilot adapter",
    "trialbook.agents.copilot": "the Copilot adapter",
    "trialbook.agents.claude_code": "the Claude Code adapter",
    "trialbook.agents.codex": "the Codex adapter",
    "trialbook.cli._json": "--json",
    "trialbook.select._shards": "--shard",
    "trialbook.select._tree": "sandbox templates",
}


def _git(cwd: Path, *args: str) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env |= {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    env |= {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t.invalid"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


def _project(tmp_path: Path) -> tuple[Path, str]:
    """A git repository with one script-agent eval committed; ``(folder, HEAD commit)``."""
    work = tmp_path / "project"
    (work / "evals").mkdir(parents=True)
    (work / "evals" / "ok.eval.yaml").write_text(
        "prompt_text: write ok\n"
        "agents: [{name: bench, script: 'echo ok > out.txt'}]\n"
        "assert:\n  - file_contains: {path: out.txt, pattern: ok}\n"
    )
    _git(work, "init", "-q", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "evals")
    return work, _git(work, "rev-parse", "HEAD").strip()


def _eval(work: Path, results: str, *extra: str, passed: str = "1/1") -> list[str]:
    args = ("eval", "evals", "--unsafe-local", "--results-dir", results, *extra)
    done, modules = _loaded_modules(*args, cwd=work)
    assert done.returncode == (0 if passed == "1/1" else 1), done.stdout + done.stderr
    assert passed in done.stdout
    return modules


def test_a_local_script_agent_run_loads_only_what_it_uses(tmp_path: Path) -> None:
    work, head = _project(tmp_path)
    modules = _eval(work, "results")
    loaded = [m for m in modules if any(m == n or m.startswith(f"{n}.") for n in _NOT_FOR_A_LOCAL_RUN)]
    assert loaded == []
    # What it skipped it did not need: the commit is still recorded, read from git's own files.
    suite = json.loads((work / "results" / "suite.json").read_text())
    assert suite["metadata"]["git_commit"] == head
    # The negative controls: each of these is importable here, so its absence is trialbook's doing.
    importable = "import copilot, jinja2, jsonschema, hypothesis, pytest, pygit2"
    assert subprocess.run([sys.executable, "-c", importable], check=False).returncode == 0


def test_the_probe_sees_what_a_run_asking_for_more_loads(tmp_path: Path) -> None:
    work, _ = _project(tmp_path)
    modules = _eval(work, "with-branch", "--history-branch", "trialbook-results", "--junit", "junit.xml")
    assert {"pygit2", "trialbook.history._git", "xml.etree.ElementTree", "trialbook.report.junit"} <= set(
        modules
    )
    assert "<testsuite" in (work / "junit.xml").read_text()
    # The literal agent writes no out.txt, so its trial fails; it is a registered agent, looked up.
    agents = _eval(work, "with-literal", "--agent", "literal", passed="0/1")
    assert "importlib.metadata" in agents


def test_the_probe_sees_what_evals_using_more_load(tmp_path: Path) -> None:
    # An eval of every other kind of check, with a template, beside a Python eval file, one shard.
    work, _ = _project(tmp_path)
    (work / "evals" / "template").mkdir()
    (work / "evals" / "template" / "README.md").write_text("hello\n")
    (work / "evals" / "checks.py").write_text("def has_ok(trial):\n    return True\n")
    (work / "evals" / "more.eval.yaml").write_text(
        "prompt_text: write ok\n"
        "agents: [{name: bench, script: 'echo ok > out.txt'}]\n"
        "sandbox: {template: template/}\n"
        "assert:\n"
        "  - not_ran: rm\n"
        "  - succeeds: test -f out.txt\n"
        "  - assert_that: {name: has-ok, check: 'checks:has_ok'}\n"
        "  - skill_used: deploy\n"
    )
    (work / "evals" / "py.eval.py").write_text(
        "from trialbook import define_eval, file_contains\n"
        "EVAL = define_eval(prompt_text='write ok', assert_=[file_contains('out.txt', 'ok')],\n"
        "    agents=[{'name': 'bench', 'script': 'echo ok > out.txt'}])\n"
    )
    modules = _eval(work, "more", "--shard", "1/1", passed="0/1")  # no skill is used: that check fails
    wanted = [name for name, why in _NOT_FOR_A_LOCAL_RUN.items() if "check" in why or "eval files" in why]
    wanted += ["trialbook.select._shards", "trialbook.select._tree"]
    assert set(wanted) <= set(modules), sorted(set(wanted) - set(modules))
    done, schema = _loaded_modules("schema", cwd=work)
    assert done.returncode == 0 and "trialbook.evalfiles._schema" in schema
    done, report = _loaded_modules("report", str(work / "more"), cwd=work)
    assert done.returncode == 0, done.stderr
    assert "trialbook.evidence._copilot" in report


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
