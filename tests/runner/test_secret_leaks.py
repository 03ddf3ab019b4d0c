"""Leak scan: an agent prints a secret in every masked form, everywhere it can; nothing finds it afterwards.

The secret holds a quote, a backslash, XML specials, ``%`` and non-ASCII, so each encoding differs from the
raw value. The agent prints every form on stdout and stderr, names a file after the secret, passes it to a
shim, and ends its message with it past the 300-character cut; a ``succeeds`` check prints the forms and an
``assert_that`` check raises with the secret past the summary's 500-character cut. Two more runs are
stopped mid-step with SIGINT, SIGTERM and SIGKILL. Every file under the results and history folders, the
terminal output, the summary, JUnit and the GitHub step outputs are then scanned for every form.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trialbook.masking import Masker

from ..github._actions import actions_environ
from .conftest import Invoke, write
from .gitrepo import commit_all, git, make_repo

SECRET = "p\"a\\ss<w>&'rd%+=中 tok-9f8e7d6c"

FORMS_SCRIPT = r"""
import base64, html, json, os, sys
from urllib.parse import quote, quote_plus
s = os.environ["LEAK_SECRET"]
b = s.encode()
print("x" * 290 + s)  # the agent's first line: the secret sits past the 300-character cut
for form in (
    s, json.dumps(s), json.dumps(s, ensure_ascii=False), html.escape(s), quote(s, safe=""), quote_plus(s),
    base64.b64encode(b).decode(), base64.urlsafe_b64encode(b).decode(), b.hex(), b.hex().upper(),
    base64.b64encode(b"q" + b + b"tail").decode(), base64.b64encode(b"qq" + b + b"tail").decode(),
):
    print("form:", form)
"""

CHECKS = """
import os

def leaks(trial):
    raise RuntimeError("y" * 490 + " the secret is " + os.environ["LEAK_SECRET"])
"""


def _project(root: Path) -> None:
    write(root / "evals/template/forms.py", FORMS_SCRIPT)
    write(root / "evals/leakchecks.py", CHECKS)
    python = sys.executable
    write(
        root / "evals/leak.eval.yaml",
        f"""
        prompt_text: "Use the token {{{{ secrets.LEAK_SECRET }}}} and report."
        secrets: [LEAK_SECRET]
        sandbox: {{template: template}}
        agents:
          - name: leaky
            script: |
              {python} forms.py
              {python} forms.py >&2
              touch "./$LEAK_SECRET"
              ls
              vendor login --token "$LEAK_SECRET" --json "{{\\"t\\": \\"$LEAK_SECRET\\"}}"
        shims:
          vendor: {{script: 'echo "vendor got $3"'}}
        assert:
          - ran: vendor login
          - succeeds: {{command: "{python} forms.py; exit 1"}}
          - assert_that: {{name: leaks, check: "leakchecks:leaks"}}
        """,
    )


def _scan(masker: Masker, texts: dict[str, bytes]) -> list[str]:
    """Every (place, form) where a masked form of the secret still occurs."""
    found = []
    for place, data in texts.items():
        for form in masker.forms:
            if form.encode() in data:
                found.append(f"{place}: {form!r}")
    for place in texts:
        if SECRET.split(" ")[1] in place:
            found.append(f"file name: {place}")
    return found


def _files(*roots: Path) -> dict[str, bytes]:
    return {
        str(path): path.read_bytes()
        for root in roots
        for path in root.rglob("*")
        if path.is_file() and ".git" not in path.parts
    }


def test_every_form_is_masked_in_every_file_stream_and_output(invoke: Invoke, tmp_path: Path) -> None:
    _project(tmp_path)
    result = invoke(
        "eval", "evals", "--history-dir", "history", "--junit", "junit.xml", "--summary", "summary.md",
        env={"LEAK_SECRET": SECRET},
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    masker = Masker([SECRET])
    results = tmp_path / ".trialbook"
    places = _files(results, tmp_path / "history")
    places["junit.xml"] = (tmp_path / "junit.xml").read_bytes()
    places["summary.md"] = (tmp_path / "summary.md").read_bytes()
    places["terminal"] = result.output.encode()
    assert any("vendor got ***" in data.decode(errors="replace") for data in places.values())
    assert _scan(masker, places) == []
    # The run really captured what the scan looks for: each place holds masks where the secret was.
    trial = next(results.glob("runs/latest/evals/*/*/trial-1"))
    assert b"***" in (trial / "calls.jsonl").read_bytes()
    assert b"***" in (trial / "script.log").read_bytes()
    assert b"***" in places["junit.xml"] and b"***" in places["summary.md"]


def test_ci_step_outputs_summary_and_pushed_history_hold_no_form(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from trialbook.cli import cli

    work, origin = make_repo(tmp_path / "repos")
    _project(work)
    commit_all(work, "evals")
    monkeypatch.chdir(work)
    environ = actions_environ(
        tmp_path, "workflow_dispatch_force_string", GITHUB_WORKSPACE=str(work), LEAK_SECRET=SECRET
    )
    environ["CI"] = "true"
    result = CliRunner().invoke(cli, ["ci", "evals"], env=environ, catch_exceptions=False)
    assert result.exit_code == 1, result.output
    masker = Masker([SECRET])
    places = _files(work / ".trialbook", tmp_path / "runner")
    places["terminal"] = result.output.encode()
    history = git(origin, "show", "trialbook-results:history/leak.jsonl")
    places["history branch"] = history.encode()
    assert "::add-mask::" in result.output  # registered with the runner before anything else
    assert _scan(masker, {k: v for k, v in places.items() if k != "terminal"}) == []
    # The only raw value allowed on the terminal is the ::add-mask:: registration itself.
    terminal = "\n".join(line for line in result.output.splitlines() if not line.startswith("::add-mask::"))
    assert _scan(masker, {"terminal": terminal.encode()}) == []
    assert b"***" in (tmp_path / "runner/summary.md").read_bytes()


STEP_EVAL = """
prompt_text: |
  ```bash
  echo "step one says {{ secrets.LEAK_SECRET }}"
  printf '%s' "{{ secrets.LEAK_SECRET }}" | base64
  touch "@MARKER@"
  sleep 8
  ```
secrets: [LEAK_SECRET]
agents: [literal]
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_run_stopped_mid_step_leaves_no_form_in_the_results(signum: int, tmp_path: Path) -> None:
    marker = tmp_path / "mid-step"
    # The sandbox passes on only declared variables, so the marker's path is written into the guide.
    write(tmp_path / "evals/step.eval.yaml", STEP_EVAL.replace("@MARKER@", str(marker)))
    sandboxes = tmp_path / "tmp"
    sandboxes.mkdir()
    env = {
        **os.environ, "CI": "true", "LEAK_SECRET": "s3cr3t-Value-9f8e7d", "MARKER": str(marker),
        "TMPDIR": str(sandboxes),
    }  # fmt: skip
    env.pop("TRIALBOOK_RESULTS_DIR", None)
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("trialbook")), "eval", "evals"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the step never started"
            time.sleep(0.1)
        process.send_signal(signum)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        if _group_alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
    masker = Masker(["s3cr3t-Value-9f8e7d"])
    places = _files(tmp_path / ".trialbook")
    places["stdout"], places["stderr"] = out, err
    assert _scan(masker, places) == []
    masked_script = next((tmp_path / ".trialbook").rglob("literal/step-1.sh"))
    assert b"***" in masked_script.read_bytes()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True
