"""The ``copilot_eval`` and ``agent_eval`` fixtures: run an agent from a test and keep its evidence.

Adapters are imported when a fixture is first used, never when pytest loads the plugin, so projects that
do not use them pay nothing and need none of the agents' dependencies. Both fixtures are async and need
pytest-asyncio (``pip install 'trialbook[pytest]'``); without it they fail the test that asks for them with
that instruction, and nothing else changes.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ._keys import STATE

try:
    import pytest_asyncio

    _ASYNC_FIXTURE: Callable[..., Any] | None = pytest_asyncio.fixture
except ImportError:  # pragma: no cover - exercised by tests/pytest_plugin/test_consumer.py
    _ASYNC_FIXTURE = None

if TYPE_CHECKING:
    from ..agents import Agent, AgentSpec
    from ..agents.copilot import CopilotAgent, CopilotEval
    from ..evidence import AgentResult, CopilotResult
    from ..testing import ChatServer, ModelServer, Reply, Turn
    from ._state import TestProgress

__all__ = ["AgentEval", "CopilotEvalRunner", "agent_eval", "copilot_eval", "loopback_api", "loopback_model"]

CopilotEvalRunner = Callable[..., Awaitable["CopilotResult"]]
AgentEval = Callable[..., Awaitable["AgentResult"]]


def _async_fixture(func: Callable[..., AsyncIterator[Any]]) -> Any:
    """``pytest_asyncio.fixture``, or a fixture that says how to get it."""
    if _ASYNC_FIXTURE is not None:
        return _ASYNC_FIXTURE(func)
    name = func.__name__

    def missing() -> None:
        pytest.fail(
            f"{name} is an async fixture and needs pytest-asyncio: pip install 'trialbook[pytest]' "
            "(or pytest-asyncio), then mark the test with @pytest.mark.asyncio",
            pytrace=False,
        )

    missing.__doc__ = func.__doc__
    return pytest.fixture(name=name)(missing)


def _require_permission(request: pytest.FixtureRequest) -> None:
    """Agents run with their permission prompts bypassed: only in CI, or when the user says so."""
    allowed = os.environ.get("CI", "").lower() == "true" or request.config.getoption(
        "trialbook_unsafe_local", default=False
    )
    if not allowed:
        pytest.fail(
            "trialbook runs agents with their permission prompts bypassed, outside any container; it does "
            "so only in CI (CI=true) or with --trialbook-unsafe-local on the pytest command line.",
            pytrace=False,
        )


def _progress(request: pytest.FixtureRequest) -> TestProgress:
    from ._state import PluginState

    state = request.config.stash.get(STATE, None)
    if state is None:  # the plugin's configure hook did not run (plugin blocked): keep a private record
        state = request.config.stash[STATE] = PluginState(evidence_path=None)
    return state.progress(request.node.nodeid)


def _check_credentials(spec: AgentSpec, env: Mapping[str, str] | None) -> None:
    """Fail the test for a credential too short to mask, warn about a weak one, naming the option.

    ``trialbook eval`` treats declared secrets so; here the options and ``env`` are all there is.
    """
    from ..errors import ConfigError
    from ..masking import credential_items, enforce_lengths

    named = [(f"{spec.name} option {where}", value) for where, value in credential_items(dict(spec.options))]
    named += [(f"{spec.name} {where}", value) for where, value in credential_items(dict(env or {}), "env")]
    refused: ConfigError | None = None
    try:
        enforce_lengths(((name, value) for name, value in named if value), stacklevel=3)
    except ConfigError as exc:  # failed outside the handler: the test's report shows no chained traceback
        refused = exc
    if refused is not None:
        pytest.fail(f"agent_eval: {refused}", pytrace=False)


@_async_fixture
async def copilot_eval(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[CopilotEvalRunner]:
    """Run a :class:`CopilotEval` from a test and keep its evidence.

    Usage: ``result = await copilot_eval(agent, prompt)``.

    Keyword arguments: ``workdir`` (default: the agent's ``working_directory``, else a fresh temporary
    folder), ``env`` (the CLI's base environment; default: this process's PATH and a private HOME) and
    ``comparison_role`` (report metadata for A/B tests). Calls in one test share one CLI server.
    """
    from ..agents.copilot import CopilotAgent
    from ..errors import ConfigError
    from ..evidence import ExecutionRecord

    agents: dict[int, CopilotAgent] = {}
    progress = _progress(request)

    async def run(
        agent: CopilotEval,
        prompt: str,
        *,
        workdir: Path | None = None,
        env: Mapping[str, str] | None = None,
        comparison_role: str | None = None,
    ) -> CopilotResult:
        _require_permission(request)
        adapter = agents.get(id(agent))
        if adapter is None:
            pool = next(iter(agents.values())).pool if agents else None
            adapter = agents[id(agent)] = CopilotAgent(agent, pool=pool)
        if workdir is None and agent.working_directory is None:
            workdir = tmp_path_factory.mktemp("copilot-work")
        refused: ConfigError | None = None
        try:
            result = await adapter.run_prompt(
                prompt, workdir=workdir, env=env, output_dir=tmp_path_factory.mktemp("copilot-out")
            )
        except ConfigError as exc:  # a credential too short to mask, named: the test fails, nothing runs
            refused = exc
        if refused is not None:
            pytest.fail(f"copilot_eval: {refused}", pytrace=False)
        progress.executions.append(ExecutionRecord(result=result, comparison_role=comparison_role))
        return result

    try:
        yield run
    finally:
        if agents:
            await next(iter(agents.values())).pool.aclose()


@_async_fixture
async def agent_eval(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[AgentEval]:
    """Run any registered agent once from a test and keep its evidence.

    Usage: ``result = await agent_eval(agent, prompt, workdir=path)``.

    ``agent`` is an :class:`~trialbook.agents.AgentSpec` or a name. ``env`` defaults to this process's
    PATH and a private HOME; ``timeout_s`` bounds the run.
    """
    from ..agents import AgentSpec, AgentTask, create_agent
    from ..evidence import ExecutionRecord

    created: list[Agent] = []
    progress = _progress(request)

    async def run(
        agent: AgentSpec | str,
        prompt: str,
        *,
        workdir: Path,
        env: Mapping[str, str] | None = None,
        timeout_s: float | None = None,
        comparison_role: str | None = None,
    ) -> AgentResult:
        _require_permission(request)
        spec = AgentSpec(agent, source=request.node.nodeid) if isinstance(agent, str) else agent
        _check_credentials(spec, env)
        adapter = create_agent(spec)
        created.append(adapter)
        home = tmp_path_factory.mktemp("agent-home")
        base: dict[str, Any] = dict(env) if env is not None else {"PATH": os.environ.get("PATH", os.defpath)}
        base.setdefault("HOME", str(home))
        task = AgentTask(
            prompt=prompt,
            workdir=workdir,
            home=Path(base["HOME"]),
            env=base,
            output_dir=tmp_path_factory.mktemp("agent-out"),
            timeout_s=timeout_s,
        )
        result = await adapter.run(task)
        progress.executions.append(ExecutionRecord(result=result, comparison_role=comparison_role))
        return result

    try:
        yield run
    finally:
        for adapter in created:
            await adapter.aclose()


@pytest.fixture
def loopback_model() -> Iterator[Callable[..., ChatServer]]:
    """Start scripted model servers on 127.0.0.1 for this test; each stops when the test ends.

    Usage: ``model = loopback_model([call("bash", command="ls"), text("done")])``, then
    ``CopilotEval(provider=model.provider(), ...)``. ``script`` is a list of replies or a function of
    the request body (see :mod:`trialbook.testing`); ``model.requests`` holds every request received.
    """
    from ..testing import ChatServer

    started: list[ChatServer] = []

    def start(script: Sequence[Reply] | Callable[[dict[str, Any]], Reply]) -> ChatServer:
        server = ChatServer(script).__enter__()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.__exit__(None, None, None)


@pytest.fixture
def loopback_api() -> Iterator[Callable[..., ModelServer]]:
    """Start scripted Anthropic Messages + OpenAI Responses servers on 127.0.0.1; each stops with the test.

    Usage: ``api = loopback_api([shell("echo hi > hi.txt"), say("done")])``, then hand an agent its
    settings: ``api.claude_code_env()`` (``ANTHROPIC_BASE_URL`` and a key) for Claude Code,
    ``api.codex_options()`` (``base_url``) for Codex, ``api.copilot_provider()`` for Copilot's
    bring-your-own-key provider. ``api.requests`` holds every request received.
    """
    from ..testing import ModelServer

    started: list[ModelServer] = []

    def start(
        script: Sequence[Turn] = (),
        *,
        fail_status: int | None = None,
        when: Mapping[str, Sequence[Turn]] | None = None,
    ) -> ModelServer:
        server = ModelServer(script, fail_status=fail_status, when=when).start()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()
