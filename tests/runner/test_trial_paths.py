"""A trial's look for left-over processes runs on the event loop only when it cannot block; checks never do.

Each way off the loop (a process of the trial still alive, a template) is taken where it must be, and
the trial's evidence is the same either way. Making a sandbox goes to a worker thread, except a reused
folder with nothing to copy or write into it; checks run in a daemon thread of their own under the
trial's check deadline (``runner._deadline``); writing the results and handing the folder over go to a
worker thread. Real runs of ``trialbook.run`` with a script agent; the thread hand-offs are counted, not
mocked.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trialbook.runner import RunReport, _trial
from trialbook.runner._deadline import within

from .local import run_as_ci


def _run(
    folder: Path, script: str, checks: str, *, template: Path | None = None, trials: int = 2, extra: str = ""
) -> RunReport:
    evals = folder / "evals"
    evals.mkdir(parents=True, exist_ok=True)
    sandbox = f"sandbox: {{template: {template}}}\n" if template else ""
    (evals / "e.eval.yaml").write_text(
        f"prompt_text: hi\nagents: [{{name: s, script: {json.dumps(script)}}}]\ntrials: {trials}\n"
        f"negative_control: false\n{sandbox}{extra}assert:\n{checks}"
    )
    return run_as_ci(evals, folder / "runs", 2)


@pytest.fixture
def handed_off(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each step went to a worker thread, by the name of the function handed off."""
    counts: dict[str, int] = {}
    real = asyncio.BaseEventLoop.run_in_executor

    def counting(loop: Any, executor: Any, function: Callable[..., Any], *args: Any) -> Any:
        # Every way to a worker thread ends here: ``to_thread`` hands over a partial of its context's
        # ``run``, the runner's ``settle`` that ``run`` itself, each with the function after it.
        inner: Any = function
        if isinstance(inner, functools.partial) and isinstance(
            getattr(inner.func, "__self__", None), contextvars.Context
        ):
            inner = inner.args[0]
        elif isinstance(getattr(inner, "__self__", None), contextvars.Context):
            inner = args[0]
        name = getattr(getattr(inner, "func", inner), "__name__", "?")
        counts[name] = counts.get(name, 0) + 1
        return real(loop, executor, function, *args)

    monkeypatch.setattr(asyncio.BaseEventLoop, "run_in_executor", counting)
    return counts


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions run under a check deadline, by name, in order."""
    names: list[str] = []
    real = within

    async def counting(function: Callable[[], Any], deadline_s: float, **kwargs: Any) -> Any:
        names.append(getattr(getattr(function, "func", function), "__name__", "?"))
        return await real(function, deadline_s, **kwargs)

    monkeypatch.setattr(_trial, "within", counting)
    return names


FILE_CHECK = "  - file_contains: {path: out.txt, pattern: ok}\n"


def _trials(report: RunReport) -> list[Any]:
    return [outcome for result in report.results for outcome in result.outcomes]


def test_a_trial_with_file_checks_is_swept_in_a_thread_and_checked_under_its_deadline(
    tmp_path: Path, handed_off: dict[str, int], checked: list[str]
) -> None:
    report = _run(tmp_path, "echo ok > out.txt", FILE_CHECK)
    assert [t.passed for t in _trials(report)] == [True, True]
    handed_off.pop("close", None)  # the run's wait for the last sandbox removals, once per run
    # The sandbox is made, swept, and the results written and the folder handed over, in worker threads.
    assert handed_off == {"_open_sandbox": 2, "sweep": 2, "_finish": 2}
    assert checked == ["check_trial", "check_trial"]


def test_a_stray_is_swept_in_a_thread_and_gone_before_the_check(
    tmp_path: Path, handed_off: dict[str, int]
) -> None:
    # The stray rewrites out.txt until it is killed; the check must see the agent's last word. The
    # agent waits until the stray runs in its own session, so the end of the agent's group cannot
    # take it before it left.
    loop = "echo $$ > stray.pid; sleep 0.3; while :; do echo stray > out.txt; sleep 0.01; done"
    script = (
        f"echo ok > out.txt; setsid -f sh -c '{loop}' >/dev/null 2>&1; "
        "until [ -s stray.pid ]; do sleep 0.01; done"
    )
    report = _run(tmp_path, script, FILE_CHECK)
    trials = _trials(report)
    assert [t.stray_processes_killed >= 1 for t in trials] == [True, True]
    assert handed_off.get("sweep") == 2
    assert [t.passed for t in trials] == [True, True]


def test_a_command_check_runs_in_a_thread(
    tmp_path: Path, handed_off: dict[str, int], checked: list[str]
) -> None:
    report = _run(tmp_path, "echo ok > out.txt", FILE_CHECK + "  - succeeds: grep -q ok out.txt\n")
    assert [t.passed for t in _trials(report)] == [True, True]
    assert checked == ["check_trial", "check_trial"]
    assert "check_trial" not in handed_off  # its own thread, never a worker of the pool
    assert handed_off.get("_finish") == 2  # after a command, not on the loop either


def test_a_template_is_copied_and_compared_in_threads(
    tmp_path: Path, handed_off: dict[str, int], checked: list[str]
) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "README").write_text("hello\n")
    report = _run(tmp_path, "echo ok > out.txt", FILE_CHECK, template=template)
    assert [t.passed for t in _trials(report)] == [True, True]
    assert handed_off.get("_open_sandbox") == 2
    assert checked == ["check_trial", "check_trial"]
    assert handed_off.get("_finish") == 2
