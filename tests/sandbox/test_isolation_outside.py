"""What an agent writes outside its project folder: listed under bwrap and kept off the host.

The attacks run as real trials (``trialbook eval`` in a subprocess) with the test's own folder as the
host's HOME, so without isolation they change only that folder; ``/etc`` is written to under bwrap alone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system import ensure
from trialbook.assertions._outside import NOT_WATCHED

from .isolated import run_isolated

ETC = Path("/etc/trialbook-outside-test")
CAPS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")


def _attack(home: Path, isolation: str) -> str:
    lines = [
        "echo pwned >> ~/.bashrc",  # the trial's own HOME
        f"echo pwned >> {home}/.bashrc",  # the host's HOME, by its path
        "echo scratch > /tmp/scratch.txt",
        "echo kept > kept.txt",
        "touch started",
    ]
    if isolation == "bwrap":  # never on this machine's own /etc
        lines.insert(0, f"echo x > {ETC} && echo wrote > etc.txt")
    return "\n".join(lines)


@pytest.mark.parametrize("isolation", ["none", "bwrap"])
def test_writes_outside_the_sandbox_are_listed_and_kept_off_the_host_only_under_bwrap(
    tmp_path: Path, isolation: str
) -> None:
    if isolation == "bwrap":
        ensure("bubblewrap")
    home = tmp_path / "home"
    home.mkdir()
    project = tmp_path / "project"
    run = run_isolated(
        project,
        _attack(home, isolation),
        isolation,
        checks="[file_exists: started, no_outside_writes: true]",
        env={"HOME": str(home)},
    )
    assert run.done.returncode == 1, run.done.stdout + run.done.stderr  # no_outside_writes fails in both
    (execution,) = run.test["executions"]
    result = execution["result"]
    (check,) = [a for a in execution["assertions"] if a["kind"] == "no_outside_writes"]
    if isolation == "none":  # the attack reaches the host, and nothing lists it
        assert (home / ".bashrc").read_text() == "pwned\n"
        assert "outside_writes" not in result
        assert check["actual"] == NOT_WATCHED
        return
    assert not (home / ".bashrc").exists() and not ETC.exists()  # the host is as it was
    listed = {(w["path"], w["size"], w["removed"]) for w in result["outside_writes"]}
    assert listed == {
        ("~/.bashrc", 6, False),
        (f"{home}/.bashrc", 6, False),
        ("/tmp/scratch.txt", 8, False),
        (str(ETC), 2, False),
    }
    assert check["actual"].startswith("4 written outside the sandbox: ")
    assert "no_outside_writes: 4 written outside the sandbox" in run.done.stdout


def test_allowed_globs_and_an_agent_that_stays_inside_pass(tmp_path: Path) -> None:
    ensure("bubblewrap")
    run = run_isolated(
        tmp_path,
        "echo kept > kept.txt; echo c > ~/.cache-file; touch started",
        "bwrap",
        checks="[file_exists: started, no_outside_writes: {allow: ['~/.cache*']}]",
    )
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    result = run.test["executions"][0]["result"]
    assert result["outside_writes"] == [{"path": "~/.cache-file", "size": 2, "removed": False}]


def test_a_removed_system_file_is_listed_as_removed_and_stays_on_the_host(tmp_path: Path) -> None:
    ensure("bubblewrap")
    run = run_isolated(tmp_path, "rm /etc/hostname && touch started", "bwrap")
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    assert Path("/etc/hostname").exists()
    result = run.test["executions"][0]["result"]
    assert result["outside_writes"] == [{"path": "/etc/hostname", "size": 0, "removed": True}]


def test_the_agent_holds_no_capability_after_the_layers_are_mounted(tmp_path: Path) -> None:
    # The mount helper held CAP_SYS_ADMIN in the trial's user namespace; with it, the agent could unmount
    # the covers over the host's hidden places. Every set must be empty, and an unmount refused.
    ensure("bubblewrap")
    script = "grep ^Cap /proc/self/status > caps.txt; "
    script += "(umount /etc && echo unmounted || echo refused) > umount.txt 2>/dev/null"
    checks = [f"{{file_contains: {{path: caps.txt, pattern: '/{name}:\\s+0{{16}}/'}}}}" for name in CAPS]
    checks.append("{file_contains: {path: umount.txt, pattern: refused}}")
    run = run_isolated(tmp_path, script + "; touch started", "bwrap", checks=f"[{', '.join(checks)}]")
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    assert len(run.test["executions"][0]["assertions"]) == len(CAPS) + 1
