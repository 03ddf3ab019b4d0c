"""The ``codex`` agent: OpenAI's Codex CLI (``codex exec --json``), one process per trial.

Each trial runs with approvals and Codex's own sandbox off (trialbook's sandbox is the boundary), an
isolated ``CODEX_HOME``, no login shell (a login shell resets ``PATH`` and would hide the trial's shims),
analytics and update checks off, and standard input closed (Codex appends piped input to the prompt).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path

from .._util.fsutil import atomic_write_text
from ..evidence import AgentResult, JsonObject, StopReason, Turn, safe_configuration
from ._audited import audit_proxy, with_audit
from ._cli_agent import CliAgent, failed_result, stopped_outcome, uncorrelated
from ._cli_run import CliRun
from ._cli_support import Options, build_env
from ._codex_stream import CodexStream, Rollout, parse_codex_stream, parse_rollout
from ._protocol import Agent, AgentSpec, AgentTask, Availability
from ._provider_names import CODEX_PASSTHROUGH

__all__ = ["NAME", "CodexAgent", "create"]

NAME = "codex"
PACKAGE = "@openai/codex"
PASSTHROUGH = CODEX_PASSTHROUGH
OPTIONS = ("model", "base_url", "args", "binary", "version", "env", "audit_requests")
DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where Codex sends its requests without a ``base_url``: the audit proxy's upstream."""
FIXED_CONFIG = ("allow_login_shell=false", "analytics.enabled=false", "check_for_update_on_startup=false")


def _watch(line: str) -> str | None:
    """Stop on retry loops that cannot end well: a rejected key (5 slow retries) or no network (forever)."""
    if '"error"' not in line:
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    message = event.get("message") if isinstance(event, dict) and event.get("type") == "error" else None
    if not isinstance(message, str) or not message.startswith("Reconnecting"):
        return None
    if any(mark in message for mark in ("401", "403", "Unauthorized", "Forbidden")):
        return (
            f"the model endpoint rejected the credentials; check CODEX_API_KEY / OPENAI_API_KEY "
            f"and base_url. Stopped instead of retrying ({message})"
        )
    if "waiting for network" in message:
        return f"the model endpoint cannot be reached; check base_url and the network ({message})"
    return None


class CodexAgent(CliAgent):
    """Runs trials through the ``codex`` binary; see the module docstring for how it is isolated."""

    NAME = NAME
    COMMAND = "codex"
    PACKAGE = PACKAGE
    OPTIONS = OPTIONS
    VERSION_PATTERN = r"^codex-cli (\S+)"
    SKILLS_FOLDER = ".agents/skills"

    def _read_options(self, options: Options) -> None:
        self._base_url = options.string("base_url")

    def available(self) -> Availability:
        """The binary is found and an API key will reach it.

        Trials run with an isolated ``CODEX_HOME``, so a ``codex login`` session of the user's is not
        used (and ``codex login status`` does not see key variables): the documented key variables are
        what counts. A custom ``base_url`` may need no key (a local model server), so it is enough alone.
        """
        binary, missing = self._binary()
        if binary is None:
            return Availability(False, f"{NAME}: {missing}")
        keys = build_env(passthrough=PASSTHROUGH, option_env=self._env, task_env={}, fixed={})
        if any(keys.get(name) or self._env.get(name) for name in PASSTHROUGH) or self._base_url is not None:
            return Availability(True)
        return Availability(
            False,
            f"{NAME}: no API key: set CODEX_API_KEY (or OPENAI_API_KEY) in the environment or in the "
            "agent's env (trials use an isolated CODEX_HOME, so `codex login` is not used)",
        )

    def argv(self, task: AgentTask, binary: Path, base_url: str | None = None) -> list[str]:
        """The command line of one trial (the prompt last, after ``--``); ``base_url`` beats the option."""
        argv = [
            str(binary),
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--skip-git-repo-check",
        ]
        argv += ["-C", str(task.workdir)]
        for setting in FIXED_CONFIG:
            argv += ["-c", setting]
        if self._model is not None:
            argv += ["-m", self._model]
        if (url := base_url or self._base_url) is not None:
            argv += ["-c", f"openai_base_url={json.dumps(url)}"]
        return [*argv, *self._args, "--", task.prompt]

    async def run(self, task: AgentTask) -> AgentResult:
        """Run one trial; failures of the agent come back as an unsuccessful result, never as an exception."""
        binary, missing = self._binary()
        if binary is None:
            return failed_result(NAME, f"{NAME}: {missing}", task)
        codex_home = task.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)  # Codex refuses a CODEX_HOME that does not exist
        env = build_env(
            passthrough=PASSTHROUGH,
            option_env=self._env,
            task_env=task.env,
            fixed={"HOME": str(task.home), "CODEX_HOME": str(codex_home)},
        )
        upstream = self._base_url or env.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        async with contextlib.AsyncExitStack() as stack:
            try:
                proxy = await stack.enter_async_context(
                    audit_proxy(self._audit_requests, upstream, task.masker, task.inputs)
                )
            except (OSError, ValueError) as exc:
                return failed_result(
                    NAME, task.masker.text(f"{NAME}: the audit proxy could not start: {exc}"), task
                )
            argv = self.argv(task, binary, proxy.url if proxy is not None else None)
            endpoint = proxy.url if proxy is not None else upstream
            logged = await self._run_logged(task, argv, env, _watch, endpoint)
        run, masker = logged.run, logged.masker
        stream = parse_codex_stream(logged.lines)
        rollout = None
        rollout_file = _find_rollout(codex_home, stream.thread_id)
        if rollout_file is not None:
            text = masker.text(rollout_file.read_text(encoding="utf-8", errors="replace"))
            atomic_write_text(task.output_dir / "codex.rollout.jsonl", text)
            rollout = parse_rollout(text.splitlines())
        config = safe_configuration(
            {
                "model": self._model,
                "base_url": masker.text(self._base_url) if self._base_url else None,
                "approvals_and_codex_sandbox": "bypassed",
                "login_shell": False,
                "audit_requests": self._audit_requests,
                "thread_id": stream.thread_id,
            }
        )
        probed = await asyncio.to_thread(self.version)
        result = codex_result(stream, rollout, run, task, probed_version=probed, config=config)
        return with_audit(result, proxy)


def _find_rollout(codex_home: Path, thread_id: str | None) -> Path | None:
    if thread_id is None:
        return None
    found = sorted((codex_home / "sessions").glob(f"**/rollout-*-{thread_id}.jsonl"))
    return found[-1] if found else None


def _outcome(stream: CodexStream, run: CliRun, task: AgentTask) -> tuple[StopReason, str | None]:
    if (stopped := stopped_outcome(NAME, run, task)) is not None:
        return stopped
    if stream.completed:
        return "completed", None
    if stream.failure is not None:
        return "execution_error", f"{NAME}: the turn failed: {stream.failure}"
    said = f": {stream.errors[-1]}" if stream.errors else ""
    return "execution_error", f"{NAME} exited with code {run.returncode} before its turn ended{said}"


def codex_result(
    stream: CodexStream,
    rollout: Rollout | None,
    run: CliRun,
    task: AgentTask,
    *,
    probed_version: str | None,
    config: JsonObject | None = None,
) -> AgentResult:
    """Turn a parsed stream, the rollout and how the process ended into the trial's evidence."""
    stop_reason, error = uncorrelated(NAME, stream.problems, _outcome(stream, run, task))
    capture_errors = [*stream.problems]
    capture_errors += [f"codex.jsonl line {n} is not JSON" for n in stream.unreadable_lines]
    if stream.final_usage is None:
        capture_errors.append("no turn completed: usage is unknown")
    if rollout is None:
        capture_errors.append("Codex's rollout file was not found: the model used is unknown")
    version = rollout.cli_version if rollout else None
    if version and probed_version and version != probed_version:
        capture_errors.append(f"codex recorded version {version} but `codex --version` said {probed_version}")
    return AgentResult(
        agent_name=NAME,
        agent_version=version or probed_version,
        success=stop_reason == "completed",
        error=error,
        stop_reason=stop_reason,
        turns=(Turn("user", task.prompt), *stream.turns),
        all_tool_calls=stream.tool_calls,
        usage=stream.usage(rollout),
        cost_usd=None,  # Codex reports no cost; estimated_cost() prices the tokens instead
        model_used=rollout.model if rollout else None,
        duration_ms=run.duration_ms,
        working_directory=str(task.workdir),
        raw_events=stream.events,
        capture_errors=tuple(capture_errors),
        configuration=config,
    )


def create(spec: AgentSpec) -> Agent:
    """Entry point of the ``codex`` agent (``trialbook.agents`` group)."""
    return CodexAgent(spec)
