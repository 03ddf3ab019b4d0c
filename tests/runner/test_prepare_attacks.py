"""Attacks on how a trial's sandbox is prepared: a hostile trial before, a results folder that cannot be
made, cancellation while trials prepare, and the caller's context in the threads ``settle`` uses.

Most attacks drive :func:`run_trial` with a real :class:`SandboxRemover`: it holds one removal at a
time, and handing it one more (a throw-away sandbox elsewhere) returns once the last trial's folder is
removed. A few go through ``trialbook.run`` end to end. Real files, real processes, no mocks.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.lifecycle.escapes import kill_survivors, wait_for_no_survivors
from trialbook.agents.script import ScriptAgent, script_agent
from trialbook.errors import RunAbortedError
from trialbook.masking import Masker
from trialbook.runner import RunReport, TrialOutcome
from trialbook.runner._cancel import handle_signals
from trialbook.runner._trial import TrialRequest, run_trial, settle
from trialbook.sandbox import ShimConfig, create_sandbox
from trialbook.sandbox._remover import SandboxRemover

from .local import run_as_ci

DEADLINE_S = 120
"""The test's own bound on a trial or run that must end at once: far past any machine's slowness."""

"""The name a finished trial's folder gets when it is emptied for the next trial (see ``sandbox._shell``)."""

LISTER = textwrap.dedent(
    """
    import os, sys
    top = os.path.dirname(os.getcwd())  # the trial folder: work/'s parent
    def describe(path, name):
        st = os.lstat(path)
        if os.path.isfile(path) and not os.path.islink(path):  # its text, wherever the folder is
            with open(path, "rb") as file:
                size = file.read().replace(top.encode(), b"<trial>")
        else:
            size = "-" if os.path.isdir(path) else os.readlink(path)
        xattrs = sorted(os.listxattr(path, follow_symlinks=False))
        return f"{name!r} {oct(st.st_mode)} {st.st_uid}:{st.st_gid} {size!r} {xattrs}"
    lines = [describe(top, ".")]
    for folder, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(folder, name)
            lines.append(describe(path, os.path.relpath(path, top)))
    with open(os.path.join(os.environ["REPORT"], os.environ["NAME"]), "w") as out:
        out.write("\\n".join(sorted(lines)) + "\\n")
    """
)

LIST = 'sleep "${PAUSE:-0}"; "$PY" "$LISTER"; echo ok > out.txt'
"""The victim: after ``PAUSE`` seconds, writes every entry of its trial folder to ``$REPORT/$NAME``."""

CONTENTS = textwrap.dedent(
    r"""
    set -e
    echo "$PWD" > "$REPORT/seen"
    mkdir -p ro/inner; echo x > ro/inner/f; chmod 555 ro/inner; chmod 500 ro
    echo x > locked; chmod 000 locked
    mkdir sealed; echo x > sealed/f; chmod 000 sealed
    ln -s "$OUTSIDE" link-dir; ln -s "$OUTSIDE/keep.txt" link-file; ln "$OUTSIDE/keep.txt" hard
    ln -s /nonexistent/path dangling
    deep=$(printf 'd/%.0s' $(seq 80)); mkdir -p "$deep"; echo deep > "${deep}bottom"
    ln -s "$OUTSIDE" "${deep}link"
    touch -- $'new\nline' '-rf' ' lead' $'tab\tname' '*' '.hidden' '..dots' 'é'
    touch -- $'\xff\xfe' "$HOME/"$'\xff\xfe' "$TMPDIR/"$'\xff\xfe' ../$'\xff\xfe'  # not UTF-8
    mkfifo fifo
    "$PY" -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'
    echo x > setuid; chmod 4755 setuid
    mkdir .git; echo x > .git/HEAD
    echo 'alias ls=false' > "$HOME/.bashrc"; mkdir -p "$HOME/.config/x"; echo x > "$HOME/.config/x/y"
    chmod 000 "$HOME/.config"; ln -s "$OUTSIDE" "$HOME/out"
    echo x > "$TMPDIR/scratch"; mkdir "$TMPDIR/sub"; chmod 000 "$TMPDIR/sub"
    echo '{"name": "fake-tool", "args": ["forged"]}' > ../calls.jsonl
    mkdir -p ../shims; printf '#!/bin/sh\necho forged\n' > ../shims/fake-tool; chmod +x ../shims/fake-tool
    echo x > ../extra; mkdir ../.hidden; ln -s "$OUTSIDE" ../work-link
    # A process of the trial still writing: the trial's end kills it before the folder is emptied.
    setsid -f sh -c 'while :; do echo x > "stray-$(date +%N)" 2>/dev/null; sleep 0.005; done' >/dev/null 2>&1
    sleep 0.05
    echo ok > out.txt
    """
)
"""The attacker: leaves every kind of entry that an emptying could trip on, in all four folders."""

STRUCTURE = {
    "work-mode": "chmod 700 .",
    "work-setgid": "chmod g+s .",
    "work-owner": "chown 4242:4242 .",
    "work-xattr": """"$PY" -c 'import os; os.setxattr(".", "user.trialbook", b"x")'""",
    "work-swapped": "cd ..; mv work old; mkdir work; echo x > work/planted",
    "work-is-a-link": 'cd ..; mv work old; ln -s "$OUTSIDE" work',
    "home-is-a-link": 'rmdir ../home; ln -s "$OUTSIDE" ../home',
    "home-is-a-file": "rmdir ../home; echo x > ../home",
    "tmp-missing": "rmdir ../tmp",
    "trial-folder-mode": "chmod 711 ..",
    "trial-folder-xattr": """"$PY" -c 'import os; os.setxattr("..", "user.trialbook", b"x")'""",
}
"""Attacks on the folders themselves: a folder that no longer passes for a fresh one is not reused."""

TEMPLATE_FILES = {"README.md": "hello\n", "src/main.py": "print('hi')\n"}
SHIMS = (ShimConfig("fake-tool", "stub", "echo shimmed"),)


class Bench:
    """Runs trials one at a time with a remover that keeps their folders for the next trial."""

    def __init__(self, tmp_path: Path, marker: str) -> None:
        self.root = tmp_path / "sandboxes"
        self.spare = tmp_path / "spare"
        self.results = tmp_path / "results" / "evals" / "e" / "s"
        self.outside = tmp_path / "outside"
        self.report = tmp_path / "report"
        self.template = tmp_path / "template"
        for folder in (self.root, self.spare, self.outside, self.report):
            folder.mkdir(parents=True)
        (self.outside / "keep.txt").write_text("the user's file\n")
        (self.outside / "sub").mkdir()
        (self.outside / "sub" / "also.txt").write_text("also\n")
        for name, text in TEMPLATE_FILES.items():
            (self.template / name).parent.mkdir(parents=True, exist_ok=True)
            (self.template / name).write_text(text)
        self.lister = tmp_path / "lister.py"
        self.lister.write_text(LISTER)
        self.marker = marker
        self.remover = SandboxRemover(limit=1)
        self.count = 0

    def request(
        self,
        *,
        name: str = "",
        template: bool = False,
        shims: bool = False,
        root: Path | None = None,
        keep: bool = False,
        env: dict[str, str] | None = None,
    ) -> TrialRequest:
        self.count += 1
        agent_env = {
            "REPORT": str(self.report),
            "OUTSIDE": str(self.outside),
            "PY": sys.executable,
            "LISTER": str(self.lister),
            "MARK": self.marker,
            "NAME": name or f"trial-{self.count}",
            **(env or {}),
        }
        return TrialRequest(
            eval_id="e",
            agent_label="s",
            trial=self.count,
            prompt="hi",
            template=self.template if template else None,
            template_exclude=(),
            shims=SHIMS if shims else (),
            secrets={},
            agent_env=agent_env,
            assertions=(),
            timeout_s=60,
            max_cost_usd=None,
            folder=self.results / f"trial-{self.count}",
            sandbox_root=self.root if root is None else root,
            keep_sandbox=keep,
        )

    def run(self, script: str, *, reuse: bool = True, **kwargs: object) -> TrialOutcome:
        request = self.request(**kwargs)  # type: ignore[arg-type]
        remover = self.remover if reuse else None
        return asyncio.run(run_trial(request, ScriptAgent("s", script), Masker(), remover=remover))

    def settled(self) -> None:
        """Return once every folder handed to the remover so far is removed."""
        throwaway = create_sandbox(root=self.spare, template=None, shims=(), secrets={}, extra_env={})
        self.remover.remove(throwaway)  # waits for the one removal the remover holds at a time

    def entries(self, root: Path | None = None) -> list[str]:
        return sorted(os.listdir(self.root if root is None else root))

    def listing(self, name: str) -> str:
        return (self.report / name).read_text()

    def outside_intact(self) -> None:
        found = sorted(str(p.relative_to(self.outside)) for p in self.outside.rglob("*"))
        assert found == ["keep.txt", "sub", "sub/also.txt"]
        assert (self.outside / "keep.txt").read_text() == "the user's file\n"
        assert (self.outside / "sub" / "also.txt").read_text() == "also\n"

    def close(self) -> None:
        assert self.remover.close() == []
        assert self.entries() == [], "a sandbox folder was left behind"


@pytest.fixture
def bench(tmp_path: Path, marker: str) -> Iterator[Bench]:
    made = Bench(tmp_path, marker)  # the marker fixture kills what still carries it afterwards
    yield made
    subprocess.run(["chattr", "-R", "-i", str(tmp_path)], capture_output=True, check=False)


def _folder(outcome: TrialOutcome) -> Path:
    assert outcome.result.working_directory is not None
    return Path(outcome.result.working_directory).parent


def _fresh(bench: Bench, **config: bool) -> str:
    """What a trial with ``config`` sees in a folder made for it (no remover: nothing reused)."""
    outcome = bench.run(LIST, reuse=False, name="fresh", **config)
    assert outcome.passed, outcome.result.error
    return bench.listing("fresh")


# -- 1. a trial never sees anything of the trial before it ---------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ({}, {}),
        ({}, {"shims": True}),
        ({}, {"template": True}),
        ({"template": True}, {}),
        ({"shims": True}, {"template": True}),
    ],
    ids=[
        "plain-then-plain",
        "plain-then-shims",
        "plain-then-template",
        "template-then-plain",
        "shims-then-template",
    ],
)
def test_a_later_trial_sees_nothing_of_a_hostile_trial_before_it(
    bench: Bench, before: dict[str, bool], after: dict[str, bool]
) -> None:
    fresh = _fresh(bench, **after)
    attacker = bench.run(CONTENTS, **before)
    assert attacker.passed, attacker.result.error
    bench.settled()
    assert bench.entries() == [], "the attacker's folder outlived its trial"
    # The pause gives a stray that outlived its trial time to write into a folder it knew.
    victim = bench.run(LIST, name="victim", env={"PAUSE": "0.1"}, **after)
    assert victim.passed, victim.result.error
    assert _folder(victim) != _folder(attacker)
    assert not _folder(attacker).exists(), "a path the attacker saw names no folder any more"
    assert bench.listing("victim") == fresh
    assert victim.calls == (), "the attacker's forged call log reached the next trial"
    bench.outside_intact()
    bench.close()
    bench.outside_intact()


@pytest.mark.parametrize("attack", list(STRUCTURE))
def test_a_trial_that_changed_its_folders_structure_leaves_the_next_trial_a_fresh_one(
    bench: Bench, attack: str
) -> None:
    fresh = _fresh(bench)
    attacker = bench.run(STRUCTURE[attack] + "; echo ok > out.txt")
    assert attacker.result.error is None
    bench.settled()
    assert bench.entries() == [], "the changed folder must be removed"
    victim = bench.run(LIST, name="victim")
    assert victim.passed, victim.result.error
    assert bench.listing("victim") == fresh
    bench.outside_intact()
    bench.close()
    bench.outside_intact()


def test_a_kept_sandbox_stays_the_trials_own_and_the_others_go(bench: Bench) -> None:
    assert bench.run("echo ok > out.txt").passed
    kept = bench.run("echo mine > mine.txt", keep=True)
    assert kept.passed and kept.sandbox_path is not None
    other = bench.run(LIST, name="other")
    assert other.passed
    assert _folder(other) != kept.sandbox_path
    assert (kept.sandbox_path / "work" / "mine.txt").read_text() == "mine\n"
    assert bench.remover.close() == []
    assert bench.entries() == [kept.sandbox_path.name], "only the kept sandbox stays"


# -- 2. a results folder that cannot be made: no sandbox is left behind -------------------


def _squat_file(bench: Bench, folder: Path) -> Callable[[], None]:
    folder.write_text("squatter\n")
    return folder.unlink


def _squat_parent(bench: Bench, folder: Path) -> Callable[[], None]:
    # The trial's folder is made with its parents: a file where a parent should be.
    moved = bench.results.rename(bench.results.with_name("moved"))
    bench.results.write_text("squatter\n")

    def undo() -> None:
        bench.results.unlink()
        moved.rename(bench.results)

    return undo


def _dangling_link(bench: Bench, folder: Path) -> Callable[[], None]:
    folder.symlink_to(bench.outside / "missing")
    return folder.unlink


def _immutable_parent(bench: Bench, folder: Path) -> Callable[[], None]:
    made = subprocess.run(["chattr", "+i", str(bench.results)], capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"chattr +i is not allowed here: {made.stderr.decode().strip()}")

    def undo() -> None:
        subprocess.run(["chattr", "-i", str(bench.results)], check=True)

    return undo


BLOCKERS = {
    "file-at-the-path": (_squat_file, FileExistsError),
    "file-at-a-parent": (_squat_parent, NotADirectoryError),
    "dangling-link-at-the-path": (_dangling_link, FileExistsError),
    "unwritable-parent": (_immutable_parent, PermissionError),
}


@pytest.mark.parametrize(
    "config", [{}, {"shims": True}, {"template": True}], ids=["loop", "shims", "template"]
)
@pytest.mark.parametrize("blocker", list(BLOCKERS))
def test_no_sandbox_is_left_when_the_results_folder_cannot_be_made(
    bench: Bench, blocker: str, config: dict[str, bool]
) -> None:
    bench.results.mkdir(parents=True, exist_ok=True)
    request = bench.request(**config)  # type: ignore[arg-type]
    block, error = BLOCKERS[blocker]
    undo = block(bench, request.folder)
    trial = run_trial(request, ScriptAgent("s", "echo ok > out.txt"), Masker(), remover=bench.remover)
    with pytest.raises(error):
        asyncio.run(asyncio.wait_for(trial, DEADLINE_S))
    # Before the remover closes: no folder was made for the failed trial, or it is gone.
    assert bench.entries() == [], "a sandbox folder of the failed trial was left behind"
    undo()
    # The remover still serves the next trial.
    after = bench.run(LIST, name="after")
    assert after.passed, after.result.error
    bench.close()


def _run_e2e(folder: Path, script: str, *, trials: int, concurrency: int, timeout: int = 10) -> RunReport:
    evals = folder / "evals"
    evals.mkdir(parents=True, exist_ok=True)
    (evals / "e.eval.yaml").write_text(
        f"prompt_text: hi\nagents: [{{name: s, script: {json.dumps(script)}}}]\ntrials: {trials}\n"
        f"timeout: {timeout}\nnegative_control: false\n"
        "assert:\n  - file_contains: {path: out.txt, pattern: ok}\n"
    )
    return run_as_ci(evals, folder / "runs", concurrency)


def test_a_trial_planting_a_file_on_a_later_trials_results_folder_stops_the_run_cleanly(
    tmp_path: Path, scratch: Path, marker: str
) -> None:
    # Trials start in order; the third plants a file where trial 8's results folder goes, and the sixth
    # and later hang, so trial 8 fails to prepare while two trials run and others wait for a place.
    script = (
        f'n=1; until mkdir "{tmp_path}/started-$n" 2>/dev/null; do n=$((n+1)); done; '
        f'if [ $n = 3 ]; then for d in "{tmp_path}"/runs/.*.partial/evals/e/s; do '
        'echo x > "$d/trial-8"; done; fi; '
        f"if [ $n -ge 6 ]; then exec -a {marker} sleep 300; fi; echo ok > out.txt"
    )
    # The hung trials would run for 300 s and time out only after an hour: a run that waited for them is
    # still running at the test's deadline, when the test ends them itself.
    waited = threading.Event()

    def end_them() -> None:
        waited.set()
        kill_survivors(marker)

    deadline = threading.Timer(DEADLINE_S, end_them)
    deadline.start()
    try:
        with pytest.raises(RunAbortedError, match=r"File exists: .*trial-8"):
            _run_e2e(tmp_path, script, trials=10, concurrency=2, timeout=3600)
    finally:
        deadline.cancel()
    assert not waited.is_set(), "the run should stop at once, not wait for the hung trials"
    assert wait_for_no_survivors(marker) == []
    assert os.listdir(scratch) == [], "a sandbox folder was left behind"


# -- 3. cancellation while trials prepare ------------------------------------------------------------


HANG = 'touch "$REPORT/running-$NAME"; exec -a "$MARK" sleep 300'
LOST_S = 30.0
"""How long a cancelled trial gets to end before its cancellation counts as lost.

Not a measure of speed: a lost cancellation leaves the trial's agent in ``sleep 300``, so the trial
never ends by itself, and a bound this long tells the two apart on however busy a machine."""


async def _cancel_preparing(bench: Bench, turns: int | None, twice: bool) -> list[BaseException | None]:
    # Sandboxes of every kind, each made in a worker thread: with shims, plain, and from a template.
    configs: list[dict[str, bool]] = [{"shims": True}, {}, {}, {"template": True}, {}]
    agent = ScriptAgent("s", HANG)
    tasks = [
        asyncio.create_task(run_trial(bench.request(**c), agent, Masker(), remover=bench.remover))  # type: ignore[arg-type]
        for c in configs
    ]
    if turns is None:  # once every agent runs
        while len(list(bench.report.glob("running-*"))) < len(tasks):
            await asyncio.sleep(0.01)
    else:
        for _ in range(turns):
            await asyncio.sleep(0)
    for task in tasks:
        task.cancel()
    if twice:
        await asyncio.sleep(0)
        for task in tasks:
            task.cancel()
    _, lost = await asyncio.wait(tasks, timeout=LOST_S)
    for task in lost:
        task.cancel()  # so a failure below does not leave a hung trial to the next test
    done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 20)
    assert not lost, "a cancellation was lost: the trial went on running its agent"
    return [item if isinstance(item, BaseException) else None for item in done]


@pytest.mark.parametrize(
    ("turns", "twice"),
    [*((turns, False) for turns in (0, 1, 2, 3, 5, 8, 20, None)), (1, True), (3, True), (None, True)],
    ids=lambda value: "running" if value is None else str(value),
)
def test_cancelling_trials_while_they_prepare_leaves_no_folder_and_no_process(
    bench: Bench, turns: int | None, twice: bool
) -> None:
    raised = asyncio.run(_cancel_preparing(bench, turns, twice))
    assert all(isinstance(item, asyncio.CancelledError) for item in raised), raised
    assert wait_for_no_survivors(bench.marker) == []
    bench.close()


def _wait_blocking(condition: Callable[[], bool]) -> None:
    """Wait for ``condition`` without giving the event loop a turn (so nothing it queued runs meanwhile)."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)
    time.sleep(0.05)  # the worker thread returns and queues its result for the loop


def test_settle_reports_a_cancellation_that_arrives_as_the_function_finishes() -> None:
    go = threading.Event()

    async def main() -> tuple[str, bool]:
        task = asyncio.create_task(settle(lambda: "made" if go.wait(10) else "timed out"))
        await asyncio.sleep(0)  # the task now waits for the thread
        go.set()
        _wait_blocking(go.is_set)
        task.cancel()  # the loop has the thread's result queued, not yet delivered
        return await task

    assert asyncio.run(main()) == ("made", True)


def test_a_trial_cancelled_as_its_sandbox_comes_back_from_the_thread_does_not_start_its_agent(
    bench: Bench,
) -> None:
    request = bench.request(shims=True, name="late")  # shims: the sandbox is made in a thread

    async def main() -> bool:
        task = asyncio.create_task(
            run_trial(request, ScriptAgent("s", HANG), Masker(), remover=bench.remover)
        )
        await asyncio.sleep(0)  # the task now waits for the thread that makes the sandbox
        _wait_blocking(lambda: any(bench.root.glob("*/shims/fake-tool")))
        task.cancel()
        _, pending = await asyncio.wait([task], timeout=LOST_S)
        if pending:  # the cancellation was lost: stop it again, so the test leaves nothing behind
            task.cancel()
            await asyncio.wait([task], timeout=20)
        return task.cancelled() and not pending

    try:
        cancelled = asyncio.run(main())
    finally:
        assert wait_for_no_survivors(bench.marker) == []
        bench.close()
    assert not (bench.report / "running-late").exists(), "the cancelled trial started its agent"
    assert cancelled


@pytest.mark.parametrize("when", ["first-sandbox", "two-running"])
@pytest.mark.parametrize("how", ["keyboard-interrupt", "handled-signal"])
def test_sigint_while_trials_prepare_leaves_no_folder_and_no_process(
    tmp_path: Path, scratch: Path, marker: str, how: str, when: str
) -> None:
    script = f'touch "{tmp_path}/running-$$"; exec -a {marker} sleep 300'
    finished = threading.Event()

    def interrupt() -> None:
        deadline = time.monotonic() + 30
        while not finished.is_set() and time.monotonic() < deadline:
            ready = os.listdir(scratch) if when == "first-sandbox" else list(tmp_path.glob("running-*"))
            if len(ready) >= (1 if when == "first-sandbox" else 2):
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.001)

    sender = threading.Thread(target=interrupt, daemon=True)
    sender.start()
    try:
        if how == "keyboard-interrupt":
            with pytest.raises(KeyboardInterrupt):
                _run_e2e(tmp_path, script, trials=8, concurrency=2)
        else:
            with handle_signals():
                report = _run_e2e(tmp_path, script, trials=8, concurrency=2)
            assert report.cancelled_by == signal.SIGINT
            assert report.results[0].cancelled >= 1
    finally:
        finished.set()
        sender.join()
    assert wait_for_no_survivors(marker) == []
    assert os.listdir(scratch) == [], "a sandbox folder was left behind"


def test_a_file_name_that_is_not_utf8_does_not_crash_the_run(tmp_path: Path, scratch: Path) -> None:
    report = _run_e2e(tmp_path, "touch $'\\xff\\xfe'; echo ok > out.txt", trials=1, concurrency=1)
    assert [result.verdict for result in report.results] == ["pass"]
    assert os.listdir(scratch) == []
    changes = json.loads(next((tmp_path / "runs").glob("*/evals/e/s/trial-1/changes.json")).read_text())
    # The name's undecodable bytes as escapes: readable, and never taken for a name made of UTF-8.
    assert sorted(entry["path"] for entry in changes["files"]) == ["\\xff\\xfe", "out.txt"]


# -- 4. settle: the caller's context in the worker thread --------------------------------------------


WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


def test_settle_runs_the_function_in_a_worker_thread_with_the_callers_context() -> None:
    async def caller() -> tuple[tuple[str, bool], bool, str]:
        WHO.set("caller")

        def function() -> tuple[str, bool]:
            seen = WHO.get()
            WHO.set("thread")  # a copy of the caller's context: the caller keeps its own value
            return seen, threading.current_thread() is threading.main_thread()

        value, cancelled = await settle(function)
        return value, cancelled, WHO.get()

    assert asyncio.run(caller()) == (("caller", False), False, "caller")


def test_settle_finishes_the_function_through_repeated_cancellations_and_says_so() -> None:
    release = threading.Event()
    started = threading.Event()
    ran: list[str] = []

    def function() -> str:
        started.set()
        release.wait(10)
        ran.append(WHO.get())
        return "made"

    async def caller() -> tuple[str, bool]:
        WHO.set("trial")
        return await settle(function)

    async def main() -> tuple[str, bool]:
        task = asyncio.create_task(caller())
        while not started.is_set():
            await asyncio.sleep(0.001)
        for _ in range(3):
            task.cancel()
            await asyncio.sleep(0.01)
        assert not task.done(), "settle returned before the function it runs had finished"
        release.set()
        return await task

    assert asyncio.run(main()) == ("made", True)
    assert ran == ["trial"]


def test_settle_raises_what_the_function_raised_after_it_finished() -> None:
    def function() -> None:
        raise OSError(f"failed as {WHO.get()}")

    async def caller() -> None:
        WHO.set("caller")
        await settle(function)

    with pytest.raises(OSError, match="failed as caller"):
        asyncio.run(caller())


def test_a_context_variable_set_by_the_caller_reaches_a_python_agent(tmp_path: Path, scratch: Path) -> None:
    # The agent runs in a worker thread of the run's loop; a run from inside a loop runs on a thread.
    seen: list[str] = []

    def agent(task: object) -> str:
        seen.append(WHO.get())
        Path(getattr(task, "workdir"), "out.txt").write_text("ok\n")  # noqa: B009
        return "done"

    entry = script_agent("py", agent)
    evals = tmp_path / "evals"
    evals.mkdir()
    (evals / "e.eval.yaml").write_text(
        f"prompt_text: hi\nagents: [{{name: py, python: {json.dumps(entry.options['python'])}}}]\n"
        "trials: 2\nnegative_control: false\nassert:\n  - file_contains: {path: out.txt, pattern: ok}\n"
    )
    token = WHO.set("the caller")
    try:
        assert [r.verdict for r in run_as_ci(evals, tmp_path / "runs", 2).results] == ["pass"]

        async def inside_a_loop() -> list[str]:
            return [r.verdict for r in run_as_ci(evals, tmp_path / "runs", 2).results]

        assert asyncio.run(inside_a_loop()) == ["pass"]
    finally:
        WHO.reset(token)
    assert seen == ["the caller"] * 4
    assert os.listdir(scratch) == []
