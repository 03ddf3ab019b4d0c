"""``audit_requests: true`` with the real Claude Code and Codex binaries, through ``trialbook eval``.

Each agent runs the examples' deploy eval twice against a fresh loopback fake model server, once directly
and once through the auditing proxy. The fake's request log and the trial's result must be the same both
times; the audited run must carry one request-audit record per model request the fake received; no file
under the results and nothing printed may hold the API key; and the proxy's port must be closed once the
trial is over, also when the trial timed out.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.clis import ensure_cli
from tests.deadlines import growing
from tests.fakes.model_server import ModelServer, RecordedRequest, Reply, hang, say, shell
from trialbook.agents import AgentSpec, _audited
from trialbook.agents._audit_proxy import AuditProxy
from trialbook.agents.claude_code import create as create_claude
from trialbook.agents.codex import create as create_codex
from trialbook.evidence import AgentResult, JsonValue, load_suite

from ..runner.conftest import Invoke, invoke
from ._cli_trial import make_trial
from ._deploy_eval import EXPECTED_CALLS, FOLLOW_THE_GUIDE, calls_of, write_deploy_eval

__all__ = ["invoke"]

pytestmark = pytest.mark.real_cli

ANTHROPIC_KEY = "sk-ant-audit-" + "b4" * 20
CODEX_KEY = "sk-audit-codex-" + "d9" * 20
KEYS = {"FAKE_ANTHROPIC_KEY": ANTHROPIC_KEY, "FAKE_CODEX_KEY": CODEX_KEY}
VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "CODEX_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")
_VOLATILE_HEADERS = {"content-length", "x-stainless-retry-count", "x-stainless-timeout"}
_STABLE_HEADERS = {
    "x-api-key",
    "authorization",
    "anthropic-version",
    "anthropic-beta",
    "content-type",
    "accept",
    "accept-encoding",
    "user-agent",
    "openai-beta",
    "originator",
    "version",
    "upgrade",
    "connection",
    "sec-websocket-version",
    "sec-websocket-extensions",
}
"""Headers whose values are the same in any two runs of one CLI (ids and keys of a session are not)."""


def _agent(name: str, server: ModelServer, audit: bool, timeout: str | None = None) -> str:
    audit_line = "  audit_requests: true\n" if audit else ""
    if name == "claude-code":
        return (
            f"- name: claude-code\n  binary: {ensure_cli('@anthropic-ai/claude-code')}\n  model: sonnet\n"
            f'{audit_line}  env:\n    ANTHROPIC_API_KEY: "{{{{ secrets.FAKE_ANTHROPIC_KEY }}}}"\n'
            f"    ANTHROPIC_BASE_URL: {server.url}\n"
        )
    return (
        f"- name: codex\n  binary: {ensure_cli('@openai/codex')}\n  model: gpt-5.5\n"
        f"  base_url: {server.openai_url}\n{audit_line}"
        '  env:\n    CODEX_API_KEY: "{{ secrets.FAKE_CODEX_KEY }}"\n'
    )


def _run(
    invoke: Invoke, root: Path, agent: str, script: list[Reply], audit: bool, timeout: str = "3m"
) -> Any:
    with ModelServer(script) as server:
        path = write_deploy_eval(root, secrets=list(KEYS), agents=_agent(agent, server, audit))
        path.write_text(path.read_text().replace("timeout: 3m", f"timeout: {timeout}"))
        output = invoke("eval", "evals", env=dict(KEYS))
        requests = list(server.requests)
    suite = load_suite(root / ".trialbook/runs/latest/suite.json")
    (test,) = suite.tests
    return output, test, test.executions[0].result, requests


def _shape(request: RecordedRequest) -> tuple[Any, ...]:
    """What the CLI sent, minus what differs between any two runs (sandbox paths, ids, lengths)."""
    body = request.body if isinstance(request.body, dict) else {}
    tools = tuple(tool.get("name") for tool in body.get("tools", []) if isinstance(tool, dict))
    turns = body.get("messages", body.get("input", []))
    roles = (
        tuple((item.get("role"), item.get("type")) for item in turns if isinstance(item, dict))
        if isinstance(turns, list)
        else ()
    )
    # In the order received; the proxy writes Host first, as HTTP/1.1 asks, wherever the CLI put it.
    names = [k for k in request.headers if k not in _VOLATILE_HEADERS and k != "host"]
    stable = {k: v for k, v in request.headers.items() if k in _STABLE_HEADERS}
    return (
        request.method,
        request.path,
        body.get("model"),
        body.get("stream"),
        tools,
        roles,
        names,
        stable,
        "host" in request.headers,
    )


def _secret_headers(requests: list[RecordedRequest]) -> set[tuple[str, str]]:
    return {(k, v) for r in requests for k, v in r.headers.items() if k in ("x-api-key", "authorization")}


def _model_requests(requests: list[RecordedRequest]) -> list[RecordedRequest]:
    return [
        r
        for r in requests
        if r.method == "POST" and r.path.split("?")[0].endswith(("/messages", "/responses"))
    ]


def _system_digest(request: RecordedRequest, agent: str) -> str:
    body = request.body
    if agent == "claude-code":
        system = body.get("system")
        text = system if isinstance(system, str) else "\n\n".join(p["text"] for p in system or [])
        parts = [text] if system is not None else []
    else:
        parts = [body["instructions"]] if body.get("instructions") else []
        for item in body["input"]:
            if item.get("role") in ("system", "developer"):
                content = item.get("content")
                parts.append(
                    content
                    if isinstance(content, str)
                    else "\n\n".join(p["text"] for p in content if p.get("type") in ("input_text", "text"))
                )
    return hashlib.sha256("\n\n".join(parts).encode()).hexdigest()


def _assert_port_closed(result: AgentResult) -> None:
    address = (result.configuration or {}).get("audit_proxy")
    assert isinstance(address, str) and address.startswith("http://127.0.0.1:"), result.configuration
    parts = urlsplit(address)
    with pytest.raises(ConnectionRefusedError), socket.create_connection((parts.hostname, parts.port), 5):
        pass


def _assert_no_key(root: Path, *outputs: str) -> None:
    """Neither key, nor a fragment of one, in what was printed or in any file under the test's folder.

    The whole folder, not only the results: the eval files, history and anything else a run writes
    beside them (the sandboxes, with the CLIs' own files, are gone by now).
    """
    for output in outputs:
        assert ANTHROPIC_KEY not in output and CODEX_KEY not in output
    files = [path for path in root.rglob("*") if path.is_file() and not path.is_symlink()]
    assert any(path.name == "result.json" for path in files), files  # the scan saw the evidence
    for path in files:
        if path.is_file():
            data = path.read_bytes()
            assert ANTHROPIC_KEY.encode() not in data, path
            assert CODEX_KEY.encode() not in data, path
            assert ANTHROPIC_KEY[8:].encode() not in data, path  # not even a fragment after the prefix
            assert CODEX_KEY[8:].encode() not in data, path


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_audited_run_is_the_direct_run_plus_its_audit(
    agent: str, invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    script = [shell(FOLLOW_THE_GUIDE), say("Deployed to production.")]
    direct_out, direct_test, direct, direct_requests = _run(invoke, tmp_path, agent, script, audit=False)
    audited_out, audited_test, audited, audited_requests = _run(invoke, tmp_path, agent, script, audit=True)
    assert direct_out.exit_code == 0, direct_out.output
    assert audited_out.exit_code == 0, audited_out.output

    # The fake saw the same requests, with the same credentials, both times.
    assert [_shape(r) for r in audited_requests] == [_shape(r) for r in direct_requests]
    assert _secret_headers(audited_requests) == _secret_headers(direct_requests) != set()
    # And the trial came out the same.
    assert audited_test.outcome == direct_test.outcome == "passed"
    assert audited.stop_reason == direct.stop_reason == "completed"
    assert audited.final_response == direct.final_response == "Deployed to production."
    assert [c.name for c in audited.all_tool_calls] == [c.name for c in direct.all_tool_calls]
    assert audited.total_input_tokens == direct.total_input_tokens
    assert audited.total_output_tokens == direct.total_output_tokens
    assert calls_of(tmp_path / f".trialbook/runs/latest/evals/deploy/{agent}/trial-1") == EXPECTED_CALLS
    assert audited.capture_errors == direct.capture_errors

    # One audit record per model request the fake received, matching what it received.
    assert direct.request_audit == ()
    model_requests = _model_requests(audited_requests)
    assert len(audited.request_audit) == len(model_requests) >= 2
    for record, request in zip(audited.request_audit, model_requests, strict=True):
        assert record.model == request.body["model"]
        tools = request.body["tools"]  # hosted tools (Codex's web_search) are not functions: no name
        functions = tuple(t["name"] for t in tools if t.get("type", "function") in ("function", "custom"))
        assert record.tool_names == functions
        assert len(record.tool_names) >= 3
        assert record.instructions_sha256 == _system_digest(request, agent)
        assert record.image_count == 0
    assert audited.configuration is not None and audited.configuration["audit_requests"] is True

    # The records survive the evidence file as written.
    saved = json.loads(
        (tmp_path / f".trialbook/runs/latest/evals/deploy/{agent}/trial-1/result.json").read_text()
    )
    assert len(saved["result"]["request_audit"]) == len(model_requests)
    _assert_port_closed(audited)
    _assert_no_key(tmp_path, direct_out.output, audited_out.output)


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_the_proxy_stops_with_a_trial_that_timed_out(
    agent: str, invoke: Invoke, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for timeout in growing(4):  # until it came after the CLI's first request (see tests.deadlines)
        output, test, result, requests = _run(
            invoke, tmp_path, agent, [hang()], audit=True, timeout=f"{timeout:g}s"
        )
        if _model_requests(requests):
            break
    else:
        pytest.fail("the CLI never sent its request")
    assert test.outcome != "passed", output.output
    assert result.stop_reason == "timeout", result.error
    assert len(result.request_audit) >= 1  # the request that hung was audited before it was forwarded
    assert len(_model_requests(requests)) >= 1
    _assert_port_closed(result)
    _assert_no_key(tmp_path, output.output)


@pytest.mark.asyncio
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
async def test_the_proxy_stops_when_its_trial_is_cancelled(
    agent: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    started: list[AuditProxy] = []

    class Recorded(AuditProxy):
        async def __aenter__(self) -> AuditProxy:
            started.append(self)
            return await super().__aenter__()

    monkeypatch.setattr(_audited, "AuditProxy", Recorded)
    with ModelServer([hang()]) as server:
        if agent == "claude-code":
            options: dict[str, JsonValue] = {"binary": str(ensure_cli("@anthropic-ai/claude-code"))}
            env = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "ANTHROPIC_BASE_URL": server.url}
        else:
            options = {"binary": str(ensure_cli("@openai/codex")), "base_url": server.openai_url}
            options["model"] = "gpt-5.5"
            env = {"CODEX_API_KEY": CODEX_KEY}
        create = create_claude if agent == "claude-code" else create_codex
        adapter = create(AgentSpec(agent, {**options, "audit_requests": True}))
        trial = make_trial(tmp_path, env=env, timeout_s=600)
        running = asyncio.ensure_future(adapter.run(trial.task))
        for _ in range(1200):  # until the model request hangs in the fake, through the proxy
            if server.model_requests() or running.done():
                break
            await asyncio.sleep(0.1)
        assert server.model_requests(), "the CLI sent no model request"
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running
    (proxy,) = started
    assert proxy.address is not None
    parts = urlsplit(proxy.address)
    with pytest.raises(ConnectionRefusedError), socket.create_connection((parts.hostname, parts.port), 5):
        pass
    assert len(proxy.findings.records) >= 1
