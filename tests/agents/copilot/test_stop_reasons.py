"""``request_audit_error`` and ``cleanup_error`` provoked on the real Copilot CLI, read from the result."""

from __future__ import annotations

import os
import select
import signal
from pathlib import Path
from typing import Any

import pytest
from copilot import define_tool
from pydantic import BaseModel

from tests.fakes.openai_chat import ChatServer, call, text
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool, _audit, _forward
from trialbook.agents.copilot._server import cli_environment
from trialbook.evidence import JsonValue, RequestAudit, dump_result, load_result

from .conftest import MiniSandbox

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio(loop_scope="module")]


async def test_an_unreadable_request_is_never_sent_and_stops_with_request_audit_error(
    copilot_cli: str,
    pkg_cache: str,
    sandbox: MiniSandbox,
    shared_pool: ServerPool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Offline the CLI only sends bodies the audit can read, so the second body is replaced by a shape
    # no provider API has before the real audit reads it; everything around it is the real path.
    real = _audit.audit_body
    seen: list[int] = []

    def second_unreadable(body: JsonValue, request_id: str | None, *, path: str = "") -> RequestAudit:
        seen.append(1)
        return real(["not", "an", "object"] if len(seen) == 2 else body, request_id, path=path)

    monkeypatch.setattr(_forward, "audit_body", second_unreadable)
    script = [call("bash", command="echo ran > ran.txt", description="x"), text("never sent")]
    with ChatServer(script) as server:
        config = CopilotEval(
            model="fake-model", provider=server.provider(), cli_path=copilot_cli, audit_requests=True
        )
        result = await CopilotAgent(config, environ={}, pool=shared_pool).run(
            sandbox.task("run it", pkg_cache)
        )
        sent = list(server.chat_requests())
    assert (sandbox.workdir / "ran.txt").exists(), "the first request went out and its tool call ran"
    assert len(sent) == 1, "the refused request never reached the model"
    assert result.success is False
    assert result.stop_reason == "request_audit_error"
    assert result.error is not None
    assert "request audit refused a request to /v1/chat/completions" in result.error
    assert "not a JSON object" in result.error
    [record] = result.request_audit
    assert record.model == "fake-model"
    saved = dump_result(result)
    assert saved["stop_reason"] == "request_audit_error"
    assert load_result(saved) == result


class Nothing(BaseModel):
    pass


def _kill_and_wait(pid: int) -> None:
    """SIGKILL ``pid`` and wait until the whole process has ended, as its pidfd tells.

    ``/proc/<pid>/stat`` says ``Z`` as soon as the main thread is gone, while a many-threaded CLI's other
    threads may still be ending; the pool (rightly) still counts such a process as running.
    """
    fd = os.pidfd_open(pid)
    try:
        os.kill(pid, signal.SIGKILL)
        select.select([fd], [], [])
    finally:
        os.close(fd)


def _remembering(pool: ServerPool, pids: list[int], wrap_disconnect: bool = False) -> None:
    """Note each acquired CLI's pid; optionally kill the CLI just before a session disconnects."""
    original = pool.acquire

    async def acquire(*args: Any, **kwargs: Any) -> Any:
        server = await original(*args, **kwargs)
        pids.append(server.client._cli_process.pid)
        if wrap_disconnect:
            create = server.client.create_session

            async def create_session(*a: Any, **k: Any) -> Any:
                session = await create(*a, **k)
                disconnect = session.disconnect

                async def kill_then_disconnect() -> Any:
                    _kill_and_wait(pids[-1])
                    return await disconnect()

                session.disconnect = kill_then_disconnect
                return session

            server.client.create_session = create_session
        return server

    pool.acquire = acquire  # type: ignore[method-assign]


def _pipe_holders(process: Any) -> set[int]:
    """Processes other than this one that hold an end of one of ``process``'s three pipes."""
    pipes = {
        f"pipe:[{os.fstat(stream.fileno()).st_ino}]"
        for stream in (process.stdin, process.stdout, process.stderr)
    }
    holders = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if links & pipes:
            holders.add(int(entry.name))
    return holders


def _wait_until_let_go(process: Any) -> None:
    """Block until no other process holds an end of ``process``'s three pipes, as the pipes tell.

    The read ends of stdout and stderr hang up once no writer is left; the write end of stdin reports an
    error once no reader is left.
    """
    poller = select.poll()
    pending = set()
    for stream in (process.stdin, process.stdout, process.stderr):
        poller.register(stream.fileno(), 0)  # hang-ups and errors are always reported
        pending.add(stream.fileno())
    while pending:
        for fd, _ in poller.poll():
            poller.unregister(fd)
            pending.discard(fd)


def _descends(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is a descendant of ``ancestor`` (``False`` once either is gone)."""
    while pid > 1:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
        if pid == ancestor:
            return True
    return False


async def test_the_process_that_is_watched_and_killed_is_the_cli_itself(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox
) -> None:
    # The configured path is npm's loader (.bin/copilot): a Node process that starts the native CLI as its
    # child on the same pipes. Had the loader been started, killing the process the SDK holds (the one the
    # trial watches for an exit) would leave the CLI answering on those pipes, and a trial whose CLI was
    # killed could complete. Whatever the timing: once the killed process is gone, nobody holds its pipes.
    assert Path(copilot_cli).resolve().name == "npm-loader.js"
    pool = ServerPool(max_idle=0)
    env = cli_environment(sandbox.env(pkg_cache), sandbox.home, copilot_cli, {})
    try:
        server = await pool.acquire(copilot_cli, env, False, sandbox.workdir)
        process = server.client._cli_process
        assert b"npm-loader" not in Path(f"/proc/{process.pid}/cmdline").read_bytes()
        # Besides the CLI, only processes it started itself may hold its pipes (a helper it runs at
        # start inherits its stderr); never a parent, as npm's loader was.
        holders = _pipe_holders(process)
        assert process.pid in holders and all(_descends(pid, process.pid) for pid in holders - {process.pid})
        _kill_and_wait(process.pid)
        # A helper of the CLI may take a moment to finish; the loader's CLI would hold them for good
        # (test_native checks that the loader is never what is started).
        _wait_until_let_go(process)
        assert _pipe_holders(process) == set(), "a process of the CLI outlived the one trialbook watches"
        await pool.release(server)
    finally:
        await pool.aclose()


async def test_a_cli_killed_mid_trial_ends_the_trial_at_once_and_the_next_trial_gets_a_fresh_cli(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox
) -> None:
    pool = ServerPool(max_idle=1)  # its own CLIs, so killing one harms no other test
    pids: list[int] = []

    def kill_the_cli(_params: Nothing, _invocation: object) -> str:
        os.kill(pids[-1], signal.SIGKILL)
        return "killed"

    tool = define_tool("crash", description="crashes", handler=kill_the_cli, params_type=Nothing)
    _remembering(pool, pids)
    try:
        with ChatServer([call("crash"), text("never")]) as server:
            config = CopilotEval(
                model="fake-model", provider=server.provider(), cli_path=copilot_cli, tools=(tool,)
            )
            # The deadline is far away: only noticing the exit ends this trial as an execution error.
            result = await CopilotAgent(config, environ={}, pool=pool).run(
                sandbox.task("crash", pkg_cache, timeout_s=300)
            )
            # The kill landed inside the turn: the tool's result never reached the model.
            assert len(list(server.chat_requests())) == 1
        assert result.success is False
        assert result.stop_reason == "execution_error"
        assert result.error is not None
        assert "the Copilot CLI exited during the trial (killed by SIGKILL)" in result.error
        assert "cleanup failed" not in result.error
        assert [call_.name for call_ in result.all_tool_calls] == ["crash"]
        saved = dump_result(result)
        assert load_result(saved) == result

        # The same environment, so the pool would hand out the same (dead) server if it kept it.
        with ChatServer([text("fine")]) as server:
            config = CopilotEval(model="fake-model", provider=server.provider(), cli_path=copilot_cli)
            again = await CopilotAgent(config, environ={}, pool=pool).run(sandbox.task("hello", pkg_cache))
        assert again.stop_reason == "completed", again.error
        assert again.success is True
        assert len(pids) == 2 and pids[0] != pids[1], "the dead CLI was not handed to the next trial"
        assert pool.started == 2

        # The idle CLI dies between trials: the next trial must not be handed the corpse either.
        _kill_and_wait(pids[-1])
        with ChatServer([text("fine again")]) as server:
            config = CopilotEval(model="fake-model", provider=server.provider(), cli_path=copilot_cli)
            third = await CopilotAgent(config, environ={}, pool=pool).run(sandbox.task("hi", pkg_cache))
        assert third.stop_reason == "completed", third.error
        assert len(set(pids)) == 3
    finally:
        await pool.aclose()


async def test_a_cli_that_dies_before_the_session_disconnects_is_a_cleanup_error(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox
) -> None:
    pool = ServerPool(max_idle=0)  # its own CLI, so killing it harms no other test
    pids: list[int] = []
    _remembering(pool, pids, wrap_disconnect=True)
    try:
        with ChatServer([text("done")]) as server:
            config = CopilotEval(model="fake-model", provider=server.provider(), cli_path=copilot_cli)
            result = await CopilotAgent(config, environ={}, pool=pool).run(
                sandbox.task("hello", pkg_cache, timeout_s=60)
            )
    finally:
        await pool.aclose()
    assert result.success is False
    assert result.stop_reason == "cleanup_error"
    assert result.error is not None
    assert "cleanup failed: disconnecting the session raised ProcessExitedError" in result.error
    saved = dump_result(result)
    assert saved["stop_reason"] == "cleanup_error"
    assert load_result(saved) == result


async def test_a_cleanup_failure_after_the_budget_stop_is_a_cleanup_error_that_keeps_the_budget_error(
    copilot_cli: str, pkg_cache: str, sandbox: MiniSandbox
) -> None:
    pool = ServerPool(max_idle=0)  # its own CLI, so killing it harms no other test
    pids: list[int] = []
    _remembering(pool, pids, wrap_disconnect=True)
    script = [
        call("bash", command="echo 1 > one.txt", description="x"),
        call("bash", command="echo 2 > two.txt", description="x"),
        text("never"),
    ]
    try:
        with ChatServer(script) as server:
            config = CopilotEval(
                model="fake-model", provider=server.provider(), cli_path=copilot_cli, tool_call_budget=1
            )
            result = await CopilotAgent(config, environ={}, pool=pool).run(
                sandbox.task("go", pkg_cache, timeout_s=60)
            )
    finally:
        await pool.aclose()
    assert (sandbox.workdir / "one.txt").exists() and not (sandbox.workdir / "two.txt").exists()
    assert result.success is False
    assert result.stop_reason == "cleanup_error", "the cleanup failure takes precedence"
    assert result.error is not None
    assert "budget" in result.error, "the original stop's error is kept"
    assert "cleanup failed: disconnecting the session raised" in result.error
    assert result.error.index("budget") < result.error.index("cleanup failed"), "in the order they happened"
    assert load_result(dump_result(result)) == result
