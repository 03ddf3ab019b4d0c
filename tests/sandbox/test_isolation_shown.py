"""Which isolation ran, said in the terminal and the job summary, with what the trial did outside (masked).

Real runs (``trialbook eval`` in a subprocess) of a script agent; under ``bwrap`` it connects to a port
of the host and writes outside its sandbox, once under a name that is a secret's value.
"""

from __future__ import annotations

from pathlib import Path

from tests.system import ensure

from .isolated import run_isolated

SECRET = "tb-shown-secret-7Qx93kd"
ATTACK = (
    "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null || true\n"
    'echo x > ~/"$TB_SHOWN_SECRET"\n'
    "echo y > /tmp/scratch.txt\n"
    "touch started"
)


def test_without_isolation_the_terminal_and_the_summary_say_none(tmp_path: Path) -> None:
    run = run_isolated(tmp_path, "touch started", "none", args=["--summary", "summary.md"])
    assert run.done.returncode == 0, run.done.stdout + run.done.stderr
    assert "isolation: none" in run.done.stdout.splitlines()
    summary = (tmp_path / "summary.md").read_text()
    assert "\nIsolation: none\n" in summary and "Outside the sandbox" not in summary
    assert run.test["properties"]["sandbox"]["network"] == "host"


def test_under_bwrap_the_terminal_and_the_summary_say_so_and_list_what_was_refused_and_written(
    tmp_path: Path, listening: int
) -> None:
    ensure("bubblewrap")
    run = run_isolated(
        tmp_path, ATTACK.format(port=listening), "bwrap", extra="secrets: [TB_SHOWN_SECRET]\n",
        env={"TB_SHOWN_SECRET": SECRET}, args=["--summary", "summary.md"],
    )  # fmt: skip
    out = run.done.stdout + run.done.stderr
    assert run.done.returncode == 0, out
    assert "isolation: bwrap (network: none)" in run.done.stdout.splitlines()
    sandbox = run.test["properties"]["sandbox"]
    assert (sandbox["isolation"], sandbox["network"]) == ("bwrap", "none")
    refused = f"network refused (1): 127.0.0.1:{listening}"
    written = "written outside the sandbox (2): /tmp/scratch.txt (2 bytes), ~/*** (2 bytes)"
    assert [line for line in out.splitlines() if line.startswith("    ")] == [
        f"    {refused}",
        f"    {written}",
    ]
    summary = (tmp_path / "summary.md").read_text()
    assert "\nIsolation: bwrap (network: none)\n" in summary
    section = summary.split("### Outside the sandbox\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "- e × s",
        f"  - trial 1: {refused}",
        "  - trial 1: written outside the sandbox (2): /tmp/scratch.txt (2 bytes), \\~/\\*\\*\\* (2 bytes)",
    ]
    assert SECRET not in summary and SECRET not in out
