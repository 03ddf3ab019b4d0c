"""The action's first step installs bubblewrap where trials will run in it, or says how, before any runs.

The step's script runs as the runner would, with a ``PATH`` of fakes only: no ``bwrap``, and an ``id``,
``sudo`` and ``apt-get`` that record their calls (``apt-get install`` puts a ``bwrap`` on that ``PATH``).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from trialbook.sandbox._isolation import APPARMOR_FIX

CHECK = Path(__file__).resolve().parents[2] / "scripts/action/check-inputs.sh"
INPUTS = {"TB_RUNNER_OS": "Linux", "TB_INSTALL": "", "TB_LABEL": "run-evals", "TB_MODE": "run"}
INSTALL = "apt-get install -y -qq bubblewrap"
INSTALLED = "isolation: installed bubblewrap (apt-get)\n"
WARNING = "::warning title=trialbook isolation::bubblewrap is not on this runner and could not be installed"


@dataclass(frozen=True)
class Runner:
    """What the fake runner has: root or not, ``sudo`` (and whether it asks a password), ``apt-get``."""

    root: bool = False
    sudo: str = "passwordless"  # or "password", or "" for none
    apt: str = "works"  # or "stale" (install fails until update ran), or "" for none
    bwrap: bool = False


def _fakes(fakes: Path, log: Path, runner: Runner) -> dict[str, str]:
    """The fake runner's programs, by name: each appends its command line to ``log``."""
    scripts = {"id": f"echo {0 if runner.root else 1001}"}
    if runner.sudo:
        refuse = "exit 1" if runner.sudo == "password" else ""
        scripts["sudo"] = f'echo "sudo $*" >> {log}\n{refuse}\n[ "$1" = -n ] && shift\n"$@"'
    if runner.apt:
        bwrap = f"printf '#!/bin/sh\\n' > {fakes}/bwrap && /bin/chmod +x {fakes}/bwrap"
        stale = f'[ "$1" = install ] && ! /bin/grep -q update {log} && exit 100\n'
        first = stale if runner.apt == "stale" else ""
        scripts["apt-get"] = f'echo "apt-get $*" >> {log}\n{first}if [ "$1" = install ]; then {bwrap}; fi'
    if runner.bwrap:
        scripts["bwrap"] = "true"
    return scripts


def _run(tmp_path: Path, runner: Runner, **inputs: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    fakes, log = tmp_path / "bin", tmp_path / "calls.log"
    fakes.mkdir()
    log.write_text("")
    for name, body in _fakes(fakes, log, runner).items():
        (fakes / name).write_text(f"#!/bin/sh\n{body}\n")
        (fakes / name).chmod(0o755)
    env = {"PATH": str(fakes), **INPUTS, **inputs}
    done = subprocess.run(
        ["/bin/bash", str(CHECK)], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done, log.read_text().splitlines()


@pytest.mark.parametrize(
    ("runner", "calls"),
    [
        (Runner(), ["sudo -n true", f"sudo -n {INSTALL}", INSTALL]),
        (Runner(root=True, sudo=""), [INSTALL]),
        (Runner(root=True, apt="stale"), [INSTALL, "apt-get update -qq", INSTALL]),
    ],
)
def test_where_the_job_may_install_it_bubblewrap_is_installed_quietly(
    tmp_path: Path, runner: Runner, calls: list[str]
) -> None:
    done, called = _run(tmp_path, runner)
    assert done.stdout == INSTALLED and done.stderr == ""
    assert called == calls
    assert (tmp_path / "bin/bwrap").is_file()


@pytest.mark.parametrize(
    ("runner", "isolation", "calls"),
    [
        (Runner(sudo=""), "auto", []),
        (Runner(sudo="password"), "auto", ["sudo -n true"]),
        (Runner(root=True, apt=""), "auto", []),
        (Runner(sudo=""), "bwrap", []),
    ],
)
def test_where_it_cannot_the_log_says_how_naming_both_fixes(
    tmp_path: Path, runner: Runner, isolation: str, calls: list[str]
) -> None:
    done, called = _run(tmp_path, runner, TB_ISOLATION=isolation)
    assert called == calls  # never a password prompt, never apt-get without root
    (line,) = done.stdout.splitlines()
    assert line.startswith(WARNING)
    assert "`sudo apt-get install -y bubblewrap`" in line and f"`{APPARMOR_FIX}`" in line
    outcome = "trials run without isolation." if isolation == "auto" else "isolation: bwrap stops the run."
    assert line.endswith(f"Until then {outcome}")


@pytest.mark.parametrize(
    ("runner", "inputs"),
    [
        (Runner(bwrap=True), {}),
        (Runner(), {"TB_ISOLATION": "none"}),
        (Runner(), {"TB_MODE": "publish", "TB_RESULTS": "r/*/results"}),
        (Runner(), {"TB_RUNNER_OS": "macOS"}),
    ],
)
def test_nothing_is_installed_where_bubblewrap_is_there_or_no_trial_runs_in_it(
    tmp_path: Path, runner: Runner, inputs: dict[str, str]
) -> None:
    done, called = _run(tmp_path, runner, **inputs)
    assert (done.stdout, called) == ("", [])
