"""Real runs for the viewer tests (the CLI, real sandboxes and agents) and a real headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from playwright.sync_api import Browser, ConsoleMessage, Page, Playwright, Request, sync_playwright

from tests.browser import ensure_chromium
from tests.system import ensure
from trialbook.cli import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CANARY = "tb-canary-<&'\"-9d2f7Q"

FLAKY_EVAL = """
prompt_text: |
  Set up the notes and deploy them.

  ```bash
  echo "draft" > notes.txt
  ```

  ```bash
  acme deploy --prod
  ```

  ```bash
  echo "deployed" >> notes.txt
  ```
agents: [literal]
trials: 4
pass_rate: 0.75
shims:
  acme:
    script: |
      n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}
      if [ $((n % 2)) -eq 1 ]; then echo "acme: quota exceeded" >&2; exit 3; fi
      echo "deployed to production"
assert:
  - ran: acme deploy --prod
  - file_contains: {{path: notes.txt, pattern: deployed}}
timeout: 1m
"""

LEAKY_EVAL = """
prompt_text: Print the token, then keep a copy.
secrets: [VIEWER_CANARY]
agents:
  - name: leaky
    script: |
      echo "token=$VIEWER_CANARY"
      printf "%s\\n" "$VIEWER_CANARY" > token.txt
      echo '</script><img src="http://127.0.0.1:9/x.png" onerror="window.pwned=1"><!--'
      echo '<b>bold</b>' > '<img src=x onerror=alert(1)>.txt'

assert:
  - file_contains: {path: token.txt, pattern: never-matches}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def run_cli(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run the CLI in this process (rendering and reading: no event loop involved)."""
    return CliRunner().invoke(cli, list(args), env={"CI": "true", **(env or {})}, catch_exceptions=False)


@dataclass
class Ran:
    exit_code: int
    output: str


def run_eval(*args: str, env: dict[str, str] | None = None) -> Ran:
    """``trialbook eval`` in a child process, as CI runs it; Playwright's sync API owns this thread's loop."""
    environment = {**os.environ, "CI": "true", **(env or {})}
    command = [sys.executable, "-c", "from trialbook.cli import main; main()", "eval", *args]
    done = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=300, check=False)
    return Ran(done.returncode, done.stdout + done.stderr)


def suite_of(results: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((results / "suite.json").read_text())
    return data


@pytest.fixture(scope="session")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled examples plus a flaky 4-trial literal eval (2 pass, 2 fail) and a leaky script agent."""
    root = tmp_path_factory.mktemp("examples-run")
    shutil.copytree(EXAMPLES / "evals", root / "evals")
    shutil.copytree(EXAMPLES / "docs", root / "docs")
    write(root / "evals/flaky-deploy.eval.yaml", FLAKY_EVAL.format(counter=root / "acme-count"))
    write(root / "evals/leaky.eval.yaml", LEAKY_EVAL)
    results = root / "results"
    result = run_eval(
        str(root / "evals"), "--results-dir", str(results), "--concurrency", "1",
        env={"VIEWER_CANARY": CANARY},
    )  # fmt: skip
    assert result.exit_code == 1, result.output  # flaky-deploy fails its threshold, leaky fails its check
    return results


LOUD_EVAL = """
prompt_text: |
  Count, then finish.

  ```bash
  seq 1 100000
  ```

  ```bash
  echo finished
  ```
agents: [literal, {name: loud, script: "seq 1 100000; echo finished"}]
negative_control: false
assert:
  - succeeds: 'true'
"""


@pytest.fixture(scope="session")
def loud_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A literal step and a script agent that each print 600 KB: their records hold excerpts."""
    root = tmp_path_factory.mktemp("loud-run")
    write(root / "evals/loud.eval.yaml", LOUD_EVAL)
    results = root / "results"
    result = run_eval(str(root / "evals"), "--results-dir", str(results), "--concurrency", "1")
    assert result.exit_code == 0, result.output
    return results


@pytest.fixture(scope="session")
def cancelled_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run the budget stopped: trials left unstarted, so both evals are incomplete."""
    root = tmp_path_factory.mktemp("cancelled-run")
    for name in ("one", "two"):
        write(
            root / f"evals/{name}.eval.yaml",
            """
            prompt_text: do it
            agents: [{name: paid, script: "touch done.txt", cost_usd: 0.5}]
            trials: 3
            assert:
              - file_exists: done.txt
            """,
        )
    results = root / "results"
    result = run_eval(
        str(root / "evals"), "--results-dir", str(results), "--budget-usd", "1.2", "--concurrency", "1"
    )
    assert result.exit_code == 3, result.output
    return results


@pytest.fixture(scope="session")
def interrupted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run cancelled with SIGINT while its second trial hangs: one trial recorded, the rest not."""
    root = tmp_path_factory.mktemp("interrupted-run")
    flag, ready = root / "first-done", root / "ready"
    script = f"if [ -f {flag} ]; then touch {ready}; sleep 300; else touch {flag} done.txt; fi"
    write(
        root / "evals/hang.eval.yaml",
        f"""
        prompt_text: do it
        agents: [{{name: hanger, script: "{script}"}}]
        trials: 3
        assert:
          - file_exists: done.txt
        """,
    )
    results = root / "results"
    command = [sys.executable, "-c", "from trialbook.cli import main; main()", "eval", str(root / "evals")]
    command += ["--results-dir", str(results), "--concurrency", "1"]
    environment = {**os.environ, "CI": "true"}
    process = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=120)
    assert process.returncode == 128 + signal.SIGINT, out.decode()
    return results


@dataclass
class IsolatedRun:
    results: Path
    port: int


@pytest.fixture(scope="session")
def isolated_run(tmp_path_factory: pytest.TempPathFactory) -> IsolatedRun:
    """One eval under bwrap (a host port refused, two files written outside), one without isolation."""
    ensure("bubblewrap")
    root = tmp_path_factory.mktemp("isolated-run")
    script = (
        "(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null || true; echo x > /tmp/scratch.txt; "
        "echo y >> ~/.bashrc; touch done.txt"
    )
    results = root / "results"
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        for name, isolation in (("walled", "bwrap"), ("open", "none")):
            write(
                root / f"evals/{name}.eval.yaml",
                f"""
                prompt_text: do it
                agents: [{{name: s, script: "{script.format(port=port)}"}}]
                negative_control: false
                sandbox: {{isolation: {isolation}}}
                assert:
                  - file_exists: done.txt
                """,
            )
        result = run_eval(str(root / "evals"), "--results-dir", str(results), "--concurrency", "1")
    assert result.exit_code == 0, result.output
    return IsolatedRun(results, port)


@dataclass
class HistoryRun:
    results: Path
    history: Path


@pytest.fixture(scope="session")
def history_run(tmp_path_factory: pytest.TempPathFactory) -> HistoryRun:
    """Four runs recorded in a history folder; the first two under an older agent version."""
    root = tmp_path_factory.mktemp("history-run")
    write(root / "evals/flaky-deploy.eval.yaml", FLAKY_EVAL.format(counter=root / "acme-count"))
    history = root / "history"
    results = root / "results"
    for _ in range(4):
        result = run_eval(
            str(root / "evals"), "--results-dir", str(results), "--history-dir", str(history),
            "--force", "--concurrency", "1", "--trials", "3",
        )  # fmt: skip
        assert result.exit_code in (0, 1), result.output
    [log] = history.glob("*.jsonl")
    lines = log.read_text().splitlines()
    old = [json.loads(line) for line in lines[:2]]
    for record in old:
        record["agent_version"] = "0.0.9"
    log.write_text("\n".join([*(json.dumps(r) for r in old), *lines[2:]]) + "\n")
    return HistoryRun(results=results, history=history)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    # Module scope, not session: Playwright's sync API keeps an event loop running in this thread while
    # it lives, and the other tests of an xdist worker call asyncio.run().
    executable = ensure_chromium()
    with sync_playwright() as playwright:
        yield _launch(playwright, executable)


def _launch(playwright: Playwright, executable: Path) -> Browser:
    # --no-sandbox: the tests run as root in CI, where Chromium refuses its own sandbox.
    return playwright.chromium.launch(executable_path=str(executable), headless=True, args=["--no-sandbox"])


@dataclass
class Watched:
    page: Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


@pytest.fixture
def open_page(browser: Browser) -> Iterator[Callable[[Path], Watched]]:
    """Open an HTML file, recording console errors, page errors and every request the page makes."""
    contexts = []

    def open_file(path: Path) -> Watched:
        context = browser.new_context(viewport={"width": 1280, "height": 860})
        contexts.append(context)
        page = context.new_page()
        watched = Watched(page)

        def on_console(message: ConsoleMessage) -> None:
            if message.type in ("error", "warning"):
                watched.errors.append(f"{message.type}: {message.text}")

        def on_request(request: Request) -> None:
            watched.requests.append(request.url)

        page.on("console", on_console)
        page.on("pageerror", lambda exc: watched.errors.append(f"pageerror: {exc}"))
        page.on("request", on_request)
        page.goto(path.as_uri())
        return watched

    yield open_file
    for context in contexts:
        context.close()
