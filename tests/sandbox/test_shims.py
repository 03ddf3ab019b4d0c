import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from tests.sandbox.conftest import MakeSandbox
from trialbook.sandbox import ShimConfig, parse_call_log

AWKWARD_ARGS = [
    "plain",
    "with space",
    'quo"te',
    "back\\slash",
    "it's",
    "héllo wörld ✓",
    "line1\nline2\ttab\rcr",
]


def shell(sandbox_env: dict[str, str], command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=sandbox_env, capture_output=True, text=True, check=False
    )


def log_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_stub_records_exact_argv_cwd_and_exit_code(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("neon", "stub", 'printf "%s|" "$@"; exit 3')])
    sub = sandbox.workdir / "sub dir"
    sub.mkdir()
    result = subprocess.run(["neon", *AWKWARD_ARGS], cwd=sub, env=sandbox.env, capture_output=True)
    assert result.returncode == 3
    assert result.stdout == ("|".join(AWKWARD_ARGS) + "|").encode()  # the stub saw every argument intact
    [line] = log_lines(sandbox.call_log)
    assert line["argv"] == ["neon", *AWKWARD_ARGS]
    assert line["cwd"] == str(sub)
    assert line["exit_code"] == 3
    assert line["error"] is None
    assert line["mode"] == "stub"
    assert line["path"] == str(sandbox.shim_dir / "neon")  # found on PATH: the shim's own path
    assert isinstance(line["started_at"], float)
    assert isinstance(line["duration_ms"], float)
    [call] = sandbox.read_calls()
    assert call.line == " ".join(["neon", *AWKWARD_ARGS])
    assert call.path == str(sandbox.shim_dir / "neon")


def test_a_call_log_line_without_a_path_reads_as_unknown_and_a_bad_one_is_a_problem() -> None:
    old = b'{"argv":["a"],"cwd":"/w","exit_code":0,"started_at":1.0,"duration_ms":1.0,"error":null}\n'
    log = parse_call_log(old + old.replace(b'"error"', b'"path":3,"error"'))
    assert [call.path for call in log.calls] == [None]
    assert log.problems == ("calls.jsonl:2: unreadable call record: path must be a string or null",)


def test_control_bytes_and_long_arguments_stay_valid_json(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("tool", "stub", None)])
    odd = "".join(chr(c) for c in range(1, 32)) + "\x7f end"
    long = "x" * 20000
    result = subprocess.run(["tool", odd, long], cwd=sandbox.workdir, env=sandbox.env)
    assert result.returncode == 0  # a stub without a script just succeeds
    [line] = log_lines(sandbox.call_log)
    assert line["argv"] == ["tool", odd, long]


def test_stub_script_runs_in_the_callers_cwd_and_environment(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(
        shims=[ShimConfig("neon", "stub", 'pwd > where; echo "$NEON_API_KEY" > key')],
        secrets={"NEON_API_KEY": "sekret"},
    )
    shell(sandbox.env, "mkdir -p app && cd app && neon init", cwd=sandbox.workdir)
    assert (sandbox.workdir / "app" / "where").read_text().strip() == str(sandbox.workdir / "app")
    assert (sandbox.workdir / "app" / "key").read_text().strip() == "sekret"


def test_passthrough_runs_the_real_binary_with_inherited_streams(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    real_bin = tmp_path / "realbin"
    real_bin.mkdir()
    tool = real_bin / "tool"
    tool.write_text('#!/bin/bash\necho "real tool: $*"; echo "to stderr" >&2; cat; exit 5\n')
    tool.chmod(0o755)
    sandbox = make_sandbox(
        shims=[ShimConfig("tool", "passthrough", None)], base_path=f"{real_bin}:/usr/bin:/bin"
    )
    result = subprocess.run(
        ["tool", "a b", "c"],
        cwd=sandbox.workdir,
        env=sandbox.env,
        input="from stdin\n",
        capture_output=True,
        text=True,
    )
    assert result.returncode == 5
    assert result.stdout == "real tool: a b c\nfrom stdin\n"
    assert result.stderr == "to stderr\n"
    [line] = log_lines(sandbox.call_log)
    assert line["argv"] == ["tool", "a b", "c"]
    assert line["exit_code"] == 5
    assert line["mode"] == "passthrough"


def test_passthrough_skips_the_shim_folder_on_the_original_path(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("echo", "passthrough", None)])
    # Even a PATH that lists the shim folder twice must not make the shim call itself.
    env = {**sandbox.env, "PATH": f"{sandbox.shim_dir}:{sandbox.env['PATH']}"}
    result = subprocess.run(
        ["echo", "hi"], cwd=sandbox.workdir, env=env, capture_output=True, text=True, timeout=30
    )
    assert result.stdout == "hi\n"
    assert len(log_lines(sandbox.call_log)) == 1


def test_missing_passthrough_binary_is_a_clear_error_and_exit_127(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    sandbox = make_sandbox(shims=[ShimConfig("nosuchtool", "passthrough", None)], base_path=str(empty))
    result = subprocess.run(
        ["nosuchtool", "deploy"],
        cwd=sandbox.workdir,
        env=sandbox.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 127
    assert "nosuchtool: not found on PATH" in result.stderr
    [call] = sandbox.read_calls()
    assert call.argv == ("nosuchtool", "deploy")
    assert call.exit_code == 127
    assert call.error is not None
    assert "not found on PATH" in call.error


def test_a_scrubbed_environment_still_logs_to_this_trial(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("neon", "stub", "echo ok")])
    result = subprocess.run(
        ["env", "-i", str(sandbox.shim_dir / "neon"), "x"],
        cwd=sandbox.workdir,
        capture_output=True,
        text=True,
    )
    assert result.stdout == "ok\n"
    assert [call.argv for call in sandbox.read_calls()] == [("neon", "x")]


def test_shimming_bash_itself_does_not_recurse(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(
        shims=[ShimConfig("bash", "passthrough", None), ShimConfig("date", "stub", "echo fake")]
    )
    result = subprocess.run(
        ["bash", "-c", "echo inner"],
        cwd=sandbox.workdir,
        env=sandbox.env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.stdout == "inner\n"
    assert [call.argv for call in sandbox.read_calls()] == [("bash", "-c", "echo inner")]


def test_two_sandboxes_in_parallel_keep_separate_complete_logs(make_sandbox: MakeSandbox) -> None:
    calls_per_process, processes = 40, 4
    boxes = {tag: make_sandbox(shims=[ShimConfig("tool", "stub", "echo done")]) for tag in ("a", "b")}
    # Each process fires its calls in the background at once, so shims append to one log concurrently;
    # a long argument makes each line bigger than one write buffer.
    long = "y" * 9000
    script = f'for i in $(seq {calls_per_process}); do tool "$TAG-$P-$i" {long} >/dev/null & done; wait'

    def run(tag: str, proc: int) -> None:
        box = boxes[tag]
        subprocess.run(
            ["bash", "-c", script], cwd=box.workdir, env={**box.env, "TAG": tag, "P": str(proc)}, check=True
        )

    threads = [threading.Thread(target=run, args=(tag, p)) for tag in boxes for p in range(processes)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for tag, box in boxes.items():
        log = box.read_call_log()
        assert log.problems == ()
        assert sorted(call.argv[1] for call in log.calls) == sorted(
            f"{tag}-{p}-{i}" for p in range(processes) for i in range(1, calls_per_process + 1)
        )
        assert all(call.argv[2] == long and call.exit_code == 0 for call in log.calls)


def test_a_killed_call_is_still_recorded(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(shims=[ShimConfig("slow", "stub", "echo started; sleep 1000")])
    proc = subprocess.Popen(
        ["slow", "arg"], cwd=sandbox.workdir, env=sandbox.env, stdout=subprocess.PIPE, start_new_session=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"started\n"
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=30)
    proc.stdout.close()
    [call] = sandbox.read_calls()
    assert call.argv == ("slow", "arg")
    assert call.exit_code is None
    assert call.error is not None
    assert "SIGTERM" in call.error


@pytest.mark.parametrize("name", ["", "a/b", ".", ".."])
def test_shim_names_must_be_bare_commands(name: str) -> None:
    with pytest.raises(ValueError, match="bare command name"):
        ShimConfig(name, "stub", None)


def test_passthrough_takes_no_script() -> None:
    with pytest.raises(ValueError, match="takes no script"):
        ShimConfig("npm", "passthrough", "echo hi")
