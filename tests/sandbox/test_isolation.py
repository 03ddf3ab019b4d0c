"""Isolation under bubblewrap, attacked by script agents: each attack works with `none`, fails with `bwrap`.

The attacker's script runs as a real trial (``trialbook eval`` in a subprocess, its HOME a folder of the
test's), so the host it attacks is the test's own: a canary in that HOME, the virtualenv trialbook runs
from (only looked at, never written), ``/etc``, a listening loopback port, and a process that escapes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.sandbox import _isolation

TRIALBOOK = Path(sys.executable).parent / "trialbook"
VENV = Path(sys.prefix)
SLEEP = {"none": 30117, "bwrap": 30119}
"""A sleep no other process on the machine has, so a survivor is found by its command line."""

ATTACK = """
prompt_text: attack the host
agents:
  - name: attacker
    script: |
      cat "{home}/canary.txt" > stolen.txt 2>/dev/null || echo none > stolen.txt
      ls "{venv}/bin" > venv.txt 2>/dev/null || true
      (echo x > "{outside}/written.txt") 2>/dev/null && echo wrote > outside.txt || echo refused > outside.txt
      {etc_line}
      (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected > net.txt || echo refused > net.txt
      setsid bash -c 'exec sleep {sleep}' < /dev/null > /dev/null 2>&1 &
      sleep 0.2
negative_control: false
sandbox: {{network: none}}
assert:
  - file_exists: stolen.txt
"""


def _attack(tmp_path: Path, isolation: str, port: int) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "canary.txt").write_text("host secret 7f3a\n")
    project = tmp_path / isolation
    (project / "evals").mkdir(parents=True)
    outside = tmp_path / f"outside-{isolation}"
    outside.mkdir()
    # Only where it cannot change this machine: /etc is written to under bwrap alone.
    etc = "(echo x > /etc/trialbook-isolation-test) 2>/dev/null && echo wrote >etc.txt || echo no >etc.txt"
    text = textwrap.dedent(ATTACK).format(
        home=home,
        venv=VENV,
        port=port,
        outside=outside,
        etc_line=etc if isolation == "bwrap" else "",
        sleep=SLEEP[isolation],
    )
    (project / "evals/attack.eval.yaml").write_text(text)
    done = subprocess.run(
        [str(TRIALBOOK), "eval", "evals", "--isolation", isolation, "--keep-sandboxes"],
        cwd=project, env={**os.environ, "CI": "true", "HOME": str(home)},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    suite = json.loads((project / ".trialbook/runs/latest/suite.json").read_text())
    (test,) = suite["tests"]
    (work,) = [Path(p) for p in (project / ".trialbook/runs/latest").glob("evals/attack/attacker/trial-1")]
    assert (work / "result.json").is_file()
    sandbox = Path(test["executions"][0]["result"]["working_directory"])
    names = ("stolen", "venv", "outside", "net", *(("etc",) if isolation == "bwrap" else ()))
    seen = {name: (sandbox / f"{name}.txt").read_text().strip() for name in names}
    seen["host file"] = str((outside / "written.txt").exists())
    seen["isolation"] = test["properties"]["sandbox"]["isolation"]
    # Found by its command line: under bwrap the pid it could write is the one in its own namespace.
    alive = subprocess.run(["pgrep", "-f", f"sleep {SLEEP[isolation]}$"], capture_output=True, check=False)
    seen["escaped alive"] = str(alive.returncode == 0)
    return seen


def test_each_attack_works_without_isolation_and_fails_under_bwrap(tmp_path: Path, listening: int) -> None:
    ensure("bubblewrap")
    open_host = _attack(tmp_path, "none", listening)
    assert open_host["isolation"] == "none"
    assert open_host["stolen"] == "host secret 7f3a"  # the attack works without isolation: the test can fail
    assert "python" in open_host["venv"]
    assert open_host["net"] == "connected"
    assert (open_host["outside"], open_host["host file"]) == ("wrote", "True")
    isolated = _attack(tmp_path, "bwrap", listening)
    assert isolated["isolation"] == "bwrap"
    assert isolated["stolen"] == "none"
    assert isolated["venv"] == ""  # trialbook's own virtualenv is not there at all
    # /etc takes the write into the trial's own layer (listed as outside_writes), never the host's /etc.
    assert isolated["etc"] == "wrote" and not Path("/etc/trialbook-isolation-test").exists()
    # A write outside the sandbox lands in the trial's own in-memory cover of /tmp, never on the host.
    assert isolated["host file"] == "False"
    assert isolated["net"] == "refused"  # network: none, even to a loopback port
    assert isolated["escaped alive"] == "False" and open_host["escaped alive"] == "False"


def test_auto_falls_back_with_one_line_and_bwrap_demanded_is_refused_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from trialbook.cli import cli

    monkeypatch.setattr(_isolation, "find_bwrap", lambda: None)
    _isolation.bwrap_problem.cache_clear()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals/e.eval.yaml").write_text(
        "prompt_text: hi\nagents: [{name: s, script: 'touch x'}]\nsandbox: {isolation: auto}\n"
        "assert: [file_exists: x]\n"
    )
    try:
        auto = CliRunner().invoke(cli, ["eval", "evals"], env={"CI": "true"})
        assert auto.exit_code == 0, auto.output
        lines = [line for line in auto.output.splitlines() if "isolation" in line]
        assert lines == [
            "warning: isolation auto: bubblewrap is not installed: install it (Debian and Ubuntu: sudo "
            "apt-get install bubblewrap); trials run without isolation",
            "isolation: none",  # which one ran, as every run says it
        ]
        suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
        assert suite["tests"][0]["properties"]["sandbox"]["isolation"] == "none"
        strict = CliRunner().invoke(cli, ["eval", "evals", "--isolation", "bwrap"], env={"CI": "true"})
        assert strict.exit_code == 2, strict.output
        assert (
            "--isolation bwrap: bubblewrap is not installed: install it (Debian and Ubuntu: sudo apt-get "
            "install bubblewrap)" in strict.output
        )
    finally:
        _isolation.bwrap_problem.cache_clear()


def test_a_timeout_under_bwrap_ends_the_trial_and_every_process_in_it(tmp_path: Path) -> None:
    ensure("bubblewrap")
    script = "sleep 30123 & setsid sleep 30123 & touch started; exec sleep 30123"
    done = _isolated_run(tmp_path, "hang", script, "timeout: 2s\n")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "hang [s] trial 1: FAIL (timeout" in done.stdout
    assert _survivors("sleep 30123$") == ""


def _isolated_run(
    tmp_path: Path, name: str, script: str, extra: str = ""
) -> subprocess.CompletedProcess[str]:
    """``trialbook eval`` of one script-agent eval under ``isolation: bwrap``, as CI runs it."""
    (tmp_path / "evals").mkdir(exist_ok=True)
    (tmp_path / f"evals/{name}.eval.yaml").write_text(
        f"prompt_text: {name}\nagents: [{{name: s, script: {json.dumps(script)}}}]\n"
        f"negative_control: false\nsandbox: {{isolation: bwrap}}\n{extra}assert: [file_exists: started]\n"
    )
    return subprocess.run(
        [str(TRIALBOOK), "eval", "evals"], cwd=tmp_path, env={**os.environ, "CI": "true"},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def _survivors(pattern: str) -> str:
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False).stdout


def _without_user_namespaces(uid: int, argv: list[str], writable: Path | None = None) -> list[str]:
    """``argv`` in a real bubblewrap that forbids new user namespaces inside it; the host keeps its own."""
    outer = [str(ensure("bubblewrap")), "--unshare-user", "--uid", str(uid), "--gid", str(uid)]
    outer += ["--disable-userns", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    if writable is not None:
        outer += ["--bind", str(writable), str(writable), "--chdir", str(writable)]
    return [*outer, "--", *argv]


@pytest.mark.parametrize("uid", [0, 1000])
def test_user_namespaces_refused_for_real_name_the_fix(uid: int) -> None:
    """Real bubblewrap inside a sandbox that forbids new user namespaces, as root and as a plain user.

    As a plain user bubblewrap says "Creating new namespace failed ... (ENOSPC)": the same refusal as
    Ubuntu's AppArmor rule or ``user.max_user_namespaces=0``, so it must carry the same fix.
    """
    code = "from trialbook.sandbox._isolation import bwrap_problem; print(bwrap_problem())"
    outer = _without_user_namespaces(uid, [sys.executable, "-c", code])
    done = subprocess.run(outer, capture_output=True, text=True, timeout=60, check=True)
    said = done.stdout.strip()
    assert said.startswith("bubblewrap cannot make user namespaces here ("), said
    assert _isolation.APPARMOR_FIX in said
    assert "\n" not in said


def test_where_user_namespaces_are_refused_auto_runs_unisolated_and_bwrap_exits_2_naming_the_fix(
    tmp_path: Path,
) -> None:
    # As on a GitHub runner (Ubuntu 24.04, not root): trialbook eval itself runs where bubblewrap cannot
    # make the trial's namespaces.
    (tmp_path / "evals").mkdir()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "evals/e.eval.yaml").write_text(
        "prompt_text: hi\nagents: [{name: s, script: 'touch x'}]\nnegative_control: false\n"
        "assert: [file_exists: x]\n"
    )
    env = {**os.environ, "CI": "true", "HOME": str(tmp_path), "TMPDIR": str(tmp_path / "tmp")}

    def run(isolation: str) -> subprocess.CompletedProcess[str]:
        argv = _without_user_namespaces(
            1000, [str(TRIALBOOK), "eval", "evals", "--isolation", isolation], tmp_path
        )
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300, check=False)

    auto = run("auto")
    assert auto.returncode == 0, auto.stdout + auto.stderr
    (line,) = [line for line in auto.stderr.splitlines() if "isolation" in line]
    assert line.startswith("warning: isolation auto: bubblewrap cannot make user namespaces here (")
    assert line.endswith(
        f"allow them with `{_isolation.APPARMOR_FIX}`, or run as root; trials run without isolation"
    )
    suite = json.loads((tmp_path / ".trialbook/runs/latest/suite.json").read_text())
    assert suite["tests"][0]["properties"]["sandbox"]["isolation"] == "none"
    strict = run("bwrap")
    assert strict.returncode == 2, strict.stdout + strict.stderr
    assert "--isolation bwrap: bubblewrap cannot make user namespaces here (" in strict.stderr
    assert f"`{_isolation.APPARMOR_FIX}`" in strict.stderr
