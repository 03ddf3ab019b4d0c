"""The ``claude-code`` agent: Anthropic's Claude Code CLI run non-interactively, one process per trial.

Each trial runs ``claude -p`` in the sandbox with permissions bypassed (the sandbox is the boundary), an
isolated HOME and config folder (so no user settings, memory, hooks, plugins or login of the runner's
machine exist for it), ``--setting-sources project`` (only the repository's own settings), an empty
``--strict-mcp-config`` (no MCP server but none), and telemetry, auto-update and non-essential traffic
off. Credentials come from ``ANTHROPIC_API_KEY``. Claude Code then discovers the project's
``CLAUDE.md`` and skills exactly as a user's session in that repository would, with its ``Skill`` tool.

``--bare`` is not used: from 2.1.286 it no longer loads ``CLAUDE.md`` from any folder, and the switches
above isolate by what they are documented to do rather than by a side effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

from .._util.owner import temp_prefix
from ..evidence import AgentResult, JsonObject, StopReason, Turn, safe_configuration
from ._audited import audit_proxy, with_audit
from ._claude_stream import ClaudeStream, parse_claude_stream
from ._cli_agent import CliAgent, failed_result, stopped_outcome, uncorrelated
from ._cli_run import CliRun
from ._cli_support import Options, build_env, masker_for
from ._protocol import Agent, AgentSpec, AgentTask, Availability
from ._provider_names import CLAUDE_PASSTHROUGH

__all__ = ["NAME", "ClaudeCodeAgent", "create"]

NAME = "claude-code"
PACKAGE = "@anthropic-ai/claude-code"
PASSTHROUGH = CLAUDE_PASSTHROUGH
OPTIONS = ("model", "max_turns", "args", "binary", "version", "env", "audit_requests")
DEFAULT_BASE_URL = "https://api.anthropic.com"
"""Where the CLI sends its requests when ``ANTHROPIC_BASE_URL`` is not set: the audit proxy's upstream."""
MAX_RETRIES = "2"
"""Default ``CLAUDE_CODE_MAX_RETRIES``: the CLI's own 10 retries back off for minutes on a dead endpoint."""

_AUTH_STATUSES = (401, 403)

NO_MCP_SERVERS = '{"mcpServers": {}}'
"""With ``--strict-mcp-config``: the session has no MCP server but the ones given here, none."""


def _watch(line: str) -> str | None:
    """Stop at the first retry of a rejected key: retrying cannot fix it, and each retry waits longer."""
    if '"api_retry"' not in line:
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if event.get("error_status") in _AUTH_STATUSES or event.get("error") == "authentication_failed":
        status = event.get("error_status")
        return (
            f"the model API rejected the credentials (HTTP {status}); check ANTHROPIC_API_KEY "
            "(and ANTHROPIC_BASE_URL). Stopped instead of retrying"
        )
    return None


class ClaudeCodeAgent(CliAgent):
    """Runs trials through the ``claude`` binary; see the module docstring for how it is isolated."""

    NAME = NAME
    COMMAND = "claude"
    PACKAGE = PACKAGE
    OPTIONS = OPTIONS
    VERSION_PATTERN = r"^(\S+) \(Claude Code\)"
    SKILLS_FOLDER = ".claude/skills"

    def __init__(self, spec: AgentSpec) -> None:
        super().__init__(spec)
        self._availability: Availability | None = None

    def _read_options(self, options: Options) -> None:
        self._max_turns = options.positive_int("max_turns")

    def available(self) -> Availability:
        """The binary is found and ``claude auth status`` accepts the key the trials will get."""
        if self._availability is None:
            self._availability = self._check()
        return self._availability

    def _check(self) -> Availability:
        binary, missing = self._binary()
        if binary is None:
            return Availability(False, f"{NAME}: {missing}")
        if self._env.get("ANTHROPIC_API_KEY"):
            return Availability(True)  # may be a {{ secrets.X }} template, rendered per trial
        if not os.environ.get("ANTHROPIC_API_KEY"):
            return Availability(
                False,
                f"{NAME}: ANTHROPIC_API_KEY is not set. trialbook runs claude with an isolated HOME, so "
                "it reads credentials only from that variable: set it in the environment or in the "
                "agent's env.",
            )
        with tempfile.TemporaryDirectory(prefix=temp_prefix("claude-")) as home:
            env = build_env(
                passthrough=PASSTHROUGH, option_env=self._env, task_env={}, fixed=_fixed(Path(home))
            )
            env["PATH"] = os.environ.get("PATH", os.defpath)
            try:
                done = subprocess.run(
                    [str(binary), "auth", "status"],
                    capture_output=True,
                    text=True,
                    timeout=30,
                    env=env,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                return Availability(False, f"{NAME}: `claude auth status` failed: {exc}")
        if done.returncode != 0:
            said = masker_for(env).text(done.stdout.strip() or done.stderr.strip())
            return Availability(False, f"{NAME}: `claude auth status` reports no usable login: {said}")
        return Availability(True)

    def argv(self, task: AgentTask, binary: Path) -> list[str]:
        """The command line of one trial (the prompt last, after ``--``)."""
        argv = [str(binary), "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--permission-mode", "bypassPermissions", "--setting-sources", "project"]
        argv += ["--strict-mcp-config", "--mcp-config", NO_MCP_SERVERS]
        if self._model is not None:
            argv += ["--model", self._model]
        if self._max_turns is not None:
            argv += ["--max-turns", str(self._max_turns)]
        if task.max_cost_usd is not None:
            # Plain decimals: a tiny cap in exponent form ("1e-05") is not a number to every parser.
            argv += ["--max-budget-usd", f"{task.max_cost_usd:.6f}".rstrip("0").rstrip(".")]
        return [*argv, *self._args, "--", task.prompt]

    async def run(self, task: AgentTask) -> AgentResult:
        """Run one trial; failures of the agent come back as an unsuccessful result, never as an exception."""
        binary, missing = self._binary()
        if binary is None:
            return failed_result(NAME, f"{NAME}: {missing}", task)
        env = build_env(
            passthrough=PASSTHROUGH,
            option_env=self._env,
            task_env=task.env,
            fixed=_fixed(task.home),
            defaults={"CLAUDE_CODE_MAX_RETRIES": MAX_RETRIES},
        )
        (task.home / ".claude").mkdir(parents=True, exist_ok=True)
        upstream = env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        async with contextlib.AsyncExitStack() as stack:
            try:
                proxy = await stack.enter_async_context(
                    audit_proxy(self._audit_requests, upstream, task.masker, task.inputs)
                )
            except (OSError, ValueError) as exc:
                return failed_result(
                    NAME, task.masker.text(f"{NAME}: the audit proxy could not start: {exc}"), task
                )
            if proxy is not None:
                env["ANTHROPIC_BASE_URL"] = proxy.url
            endpoint = proxy.url if proxy is not None else upstream
            logged = await self._run_logged(task, self.argv(task, binary), env, _watch, endpoint)
        run, masker = logged.run, logged.masker
        stream = parse_claude_stream(logged.lines)
        configuration = safe_configuration(
            {
                "model": self._model,
                "max_turns": self._max_turns,
                "max_budget_usd": task.max_cost_usd,
                "permission_mode": "bypassPermissions",
                "setting_sources": "project",
                "strict_mcp_config": True,
                "audit_requests": self._audit_requests,
                "project_dirs": [str(task.workdir)],
                "session_id": stream.session_id,
                "tools": stream.init.get("tools") if stream.init else None,
            }
        )
        result = claude_result(
            stream,
            run,
            task,
            probed_version=await asyncio.to_thread(self.version),
            stderr=masker.text(run.stderr),
            config=configuration,
        )
        return with_audit(result, proxy)


def _fixed(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "IS_SANDBOX": "1",  # CI runs as root, where bypassPermissions is refused without it
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }


def _outcome(
    stream: ClaudeStream, run: CliRun, task: AgentTask, stderr: str
) -> tuple[StopReason, str | None]:
    result = stream.result
    # A stopped run wins even when the CLI wraps up and prints a result in the grace period after
    # SIGTERM (it does: it kills its tools and finishes the turn).
    if (stopped := stopped_outcome(NAME, run, task)) is not None:
        return stopped
    if result is None:
        last = stderr.strip().splitlines()[-1:] or ["no output on stderr"]
        return (
            "execution_error",
            f"{NAME} exited with code {run.returncode} before its result event: {last[0]}",
        )
    subtype, errors = result.get("subtype"), result.get("errors")
    detail = "; ".join(str(e) for e in errors) if isinstance(errors, list) and errors else None
    if subtype == "error_max_turns":
        return "execution_error", f"error_max_turns: {detail or 'the max_turns limit was reached'}"
    if subtype == "error_max_budget_usd":
        return "execution_error", f"error_max_budget_usd: {detail or 'the per-trial cost cap was reached'}"
    if result.get("is_error") is True or subtype != "success":
        said = detail or result.get("result") or "; ".join(stream.synthetic_errors) or "no detail given"
        status = result.get("api_error_status")
        return "execution_error", f"{subtype}: {said}" + (f" (HTTP {status})" if status else "")
    return "completed", None


def claude_result(
    stream: ClaudeStream,
    run: CliRun,
    task: AgentTask,
    *,
    probed_version: str | None,
    stderr: str = "",
    config: JsonObject | None = None,
) -> AgentResult:
    """Turn a parsed stream and how the process ended into the trial's evidence."""
    stop_reason, error = uncorrelated(NAME, stream.problems, _outcome(stream, run, task, stderr))
    capture_errors = [*stream.problems]
    capture_errors += [f"claude.jsonl line {n} is not JSON" for n in stream.unreadable_lines]
    if stream.result is None:
        capture_errors.append("the stream ended without a result event: usage and cost are unknown")
    if stream.version and probed_version and stream.version != probed_version:
        capture_errors.append(
            f"claude reported version {stream.version} but `claude --version` said {probed_version}"
        )
    duration = stream.result.get("duration_ms") if stream.result else None
    return AgentResult(
        agent_name=NAME,
        agent_version=stream.version or probed_version,
        success=stop_reason == "completed",
        error=error,
        stop_reason=stop_reason,
        turns=(Turn("user", task.prompt), *stream.turns),
        all_tool_calls=stream.tool_calls,
        usage=stream.usage(),
        cost_usd=stream.cost_usd(),
        model_used=stream.model,
        duration_ms=float(duration) if isinstance(duration, int | float) else run.duration_ms,
        working_directory=str(task.workdir),
        raw_events=stream.events,
        capture_errors=tuple(capture_errors),
        configuration=config,
    )


def create(spec: AgentSpec) -> Agent:
    """Entry point of the ``claude-code`` agent (``trialbook.agents`` group)."""
    return ClaudeCodeAgent(spec)
