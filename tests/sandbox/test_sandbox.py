import asyncio
import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import MakeSandbox
from trialbook.errors import ConfigError
from trialbook.evidence import AgentResult
from trialbook.sandbox import ShimConfig, create_sandbox

RESULT = AgentResult(agent_name="test", agent_version=None, success=True, error=None, stop_reason="completed")


def make_template(root: Path) -> Path:
    template = root / "template"
    (template / "src").mkdir(parents=True)
    (template / "src" / "main.py").write_text("print('hi')\n")
    (template / "README.md").write_text("readme\n")
    (template / "link").symlink_to("README.md")
    return template


def test_layout_keeps_shims_and_log_outside_the_workdir(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("neon", "stub", "true")])
    assert sandbox.path.parent == tmp_path / "trials"
    assert sandbox.path.name.startswith("trialbook-")
    assert sandbox.workdir == sandbox.path / "work"
    assert sandbox.workdir.is_dir()
    assert list(sandbox.workdir.iterdir()) == []
    assert sandbox.shim_dir == sandbox.path / "shims"
    assert os.access(sandbox.shim_dir / "neon", os.X_OK)
    assert sandbox.call_log == sandbox.path / "calls.jsonl"
    assert sandbox.read_calls() == []
    # HOME starts empty, as a new account's; the XDG folders are the tools' to make, inside it.
    assert sandbox.home.is_dir()
    assert list(sandbox.home.iterdir()) == []
    assert sandbox.tmp.is_dir()
    for xdg in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        assert Path(sandbox.env[xdg]).is_relative_to(sandbox.home)


def test_environment_holds_only_what_an_agent_needs(
    make_sandbox: MakeSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_ONLY_TOKEN", "leak-me")
    sandbox = make_sandbox(
        secrets={"NEON_API_KEY": "neon-secret"}, extra_env={"FOO": "bar"}, base_path="/usr/bin:/bin"
    )
    outcome = sandbox.finished(RESULT).run("env", timeout_s=30)
    assert outcome.exit_code == 0
    seen = dict(line.split("=", 1) for line in outcome.output.splitlines() if "=" in line)
    assert "RUNNER_ONLY_TOKEN" not in seen
    assert "leak-me" not in outcome.output
    assert seen["NEON_API_KEY"] == "neon-secret"
    assert seen["FOO"] == "bar"
    assert seen["HOME"] == str(sandbox.home)
    assert seen["PATH"] == f"{sandbox.shim_dir}:/usr/bin:/bin"
    assert seen["TMPDIR"] == str(sandbox.tmp)
    assert Path(seen["TMPDIR"]).is_relative_to(sandbox.path)
    assert seen["LANG"] == seen["LC_ALL"] == "C.UTF-8"
    assert seen["TERM"] == "dumb"
    expected = {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TERM", "TMPDIR", "SHELL",
        "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "NEON_API_KEY", "FOO",
    }  # fmt: skip
    assert set(sandbox.env) == expected


def test_extra_env_path_keeps_the_shims_first(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(extra_env={"PATH": "/opt/tools/bin:/usr/bin"})
    assert sandbox.env["PATH"] == f"{sandbox.shim_dir}:/opt/tools/bin:/usr/bin"


def test_template_copies_are_independent(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    template = make_template(tmp_path)
    first, second = make_sandbox(template=template), make_sandbox(template=template)
    assert (first.workdir / "src" / "main.py").read_text() == "print('hi')\n"
    assert (first.workdir / "link").is_symlink()
    assert os.readlink(first.workdir / "link") == "README.md"
    (first.workdir / "README.md").write_text("changed by the agent\n")
    (first.workdir / "src" / "new.txt").write_text("new\n")
    assert (template / "README.md").read_text() == "readme\n"
    assert (second.workdir / "README.md").read_text() == "readme\n"
    assert not (second.workdir / "src" / "new.txt").exists()
    assert not (template / "src" / "new.txt").exists()


def test_missing_template_is_a_config_error_and_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sandbox template must be an existing folder"):
        create_sandbox(
            root=tmp_path / "trials", template=tmp_path / "nope", shims=(), secrets={}, extra_env={}
        )
    assert list((tmp_path / "trials").iterdir()) == []


def test_repeated_shim_names_are_refused(tmp_path: Path) -> None:
    shims = [ShimConfig("npm", "passthrough"), ShimConfig("npm", "stub", "true")]
    with pytest.raises(ValueError, match="repeated: npm"):
        create_sandbox(root=tmp_path, template=None, shims=shims, secrets={}, extra_env={})


def test_close_removes_everything_even_read_only_folders(make_sandbox: MakeSandbox, tmp_path: Path) -> None:
    sandbox = make_sandbox(template=make_template(tmp_path), shims=[ShimConfig("x", "stub", None)])
    locked = sandbox.workdir / "gomodcache" / "mod"
    locked.mkdir(parents=True)
    (locked / "file.go").write_text("package x\n")
    (locked / "file.go").chmod(stat.S_IRUSR)
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    assert sandbox.close() is None
    assert not sandbox.path.exists()
    assert sandbox.close() is None  # twice is fine
    assert list((tmp_path / "trials").iterdir()) == []


def test_keep_leaves_the_folder_and_returns_its_path(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    (sandbox.workdir / "out.txt").write_text("kept\n")
    assert sandbox.close(keep=True) == sandbox.path
    assert (sandbox.workdir / "out.txt").read_text() == "kept\n"


def test_context_manager_closes(tmp_path: Path) -> None:
    with create_sandbox(root=tmp_path, template=None, shims=(), secrets={}, extra_env={}) as sandbox:
        assert sandbox.workdir.is_dir()
    assert not sandbox.path.exists()


def test_finished_trial_reads_files_only_inside_the_workdir(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("runner file\n")
    sandbox = make_sandbox(template=make_template(tmp_path))
    (sandbox.workdir / "escape").symlink_to(outside)
    trial = sandbox.finished(RESULT)
    assert trial.result is RESULT
    assert trial.workdir == sandbox.workdir
    assert trial.read_text("src/main.py") == "print('hi')\n"
    assert trial.read_text("link") == "readme\n"
    assert trial.read_text("src") is None  # a folder is not a readable file
    assert trial.read_text("missing.txt") is None
    assert trial.exists("src/main.py")
    assert trial.exists("src")
    assert not trial.exists("missing.txt")
    assert trial.read_text("escape") is None
    assert not trial.exists("escape")
    for bad in ("../outside.txt", "src/../../outside.txt", str(outside)):
        with pytest.raises(ValueError, match="relative to the sandbox workdir"):
            trial.read_text(bad)
        with pytest.raises(ValueError, match="relative to the sandbox workdir"):
            trial.exists(bad)


def test_finished_trial_runs_commands_with_the_shims(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("neon", "stub", "echo neon says $1")])
    trial = sandbox.finished(RESULT)
    outcome = trial.run("pwd; neon hello; echo oops >&2; exit 4", timeout_s=30)
    assert outcome.exit_code == 4
    assert not outcome.timed_out
    assert outcome.output == f"{sandbox.workdir}\nneon says hello\noops\n"
    # the check's own call is logged too, but the finished trial's calls were read before it ran
    assert trial.calls == ()
    assert [call.argv for call in sandbox.read_calls()] == [("neon", "hello")]


def test_finished_trial_command_timeout(make_sandbox: MakeSandbox) -> None:
    outcome = make_sandbox().finished(RESULT).run("echo before; sleep 1000", timeout_s=0.5)
    assert outcome.timed_out
    assert outcome.exit_code is None
    assert outcome.output == "before\n"


@pytest.mark.asyncio
async def test_finished_trial_run_works_from_inside_an_event_loop(make_sandbox: MakeSandbox) -> None:
    trial = make_sandbox().finished(RESULT)
    outcome = await asyncio.to_thread(trial.run, "echo threaded", 30)
    assert outcome.output == "threaded\n"
    assert trial.run("echo in-loop", 30).output == "in-loop\n"


def test_call_log_problems_are_reported_not_raised(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    good = '{"argv":["neon","b"],"cwd":"/w","exit_code":0,"started_at":2.5,"duration_ms":1.0,"error":null}\n'
    first = (
        '{"argv":["neon","a"],"cwd":"/w","exit_code":null,"started_at":1.5,"duration_ms":null,"error":"x"}\n'
    )
    sandbox.call_log.write_text(good + '{"argv": "not a list"}\n' + first + '{"argv":["neon","c"],"cw')
    trial = sandbox.finished(RESULT)
    assert [call.argv for call in trial.calls] == [("neon", "a"), ("neon", "b")]  # in start order
    assert trial.calls[0].exit_code is None
    assert trial.calls[0].duration_ms is None
    assert len(trial.call_log_problems) == 2
    assert (
        "calls.jsonl:2: unreadable call record: argv must be a non-empty list of strings"
        in trial.call_log_problems[0]
    )
    assert "calls.jsonl:4:" in trial.call_log_problems[1]
    assert "partly written last line" in trial.call_log_problems[1]
    assert sandbox.call_log_problems == trial.call_log_problems


def test_read_only_folders_are_opened_up_before_removal(tmp_path: Path) -> None:
    # As root the removal above succeeds regardless; this checks the mode repair that other users need.
    from trialbook.sandbox._sandbox import _make_writable

    locked = tmp_path / "tree" / "a" / "b"
    locked.mkdir(parents=True)
    for folder in (locked, locked.parent):
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    _make_writable(tmp_path / "tree")
    for folder in (locked, locked.parent):
        assert stat.S_IMODE(folder.stat().st_mode) & stat.S_IRWXU == stat.S_IRWXU


def test_without_shims_there_is_no_shim_folder_and_the_log_reads_empty(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox()
    assert sorted(p.name for p in sandbox.path.iterdir()) == ["home", "tmp", "work"]
    # PATH still names the shim folder first, so the layout an agent sees is the same either way.
    assert sandbox.env["PATH"].split(os.pathsep)[0] == str(sandbox.shim_dir)
    assert sandbox.read_calls() == []
    assert sandbox.call_log_problems == ()
    done = subprocess.run(["/bin/sh", "-c", "ls"], cwd=sandbox.workdir, env=sandbox.env, capture_output=True)
    assert done.returncode == 0
