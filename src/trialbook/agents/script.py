"""Script agents: a shell script or a Python function standing in for an agent.

They make evals and tests deterministic and free: the script does what an agent would (edit files, call
shimmed CLIs) and its output becomes the agent's one tool call and closing message. In an eval file an
agent entry with ``script:`` is one; in Python, :func:`script_agent` builds the entry.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeAlias

from .._util.fsutil import atomic_write_text
from ..errors import ConfigError
from ..evidence import AgentResult, JsonValue, StopReason
from ..sandbox import bash_path
from ..sandbox.process import run_process
from ._local import LocalAgent, LocalStep, local_result
from ._protocol import Agent, AgentSpec, AgentTask

__all__ = ["ScriptAgent", "ScriptFunction", "create", "script_agent"]

ScriptFunction: TypeAlias = Callable[[AgentTask], "Awaitable[str | None] | str | None"]
"""A Python stand-in for an agent: given the trial, it does the work and returns what it would say."""

_FUNCTIONS: dict[str, ScriptFunction] = {}
"""Functions passed to :func:`script_agent` in this process, by the reference their entry carries."""

_OPTIONS = frozenset({"script", "python", "env", "cost_usd"})  # env is applied by the runner


SCRIPT_LOG = "script.log"
"""The trial folder's file that keeps a script agent's output whole (up to ``limits.output``)."""

CLOSING_CHARS = 4096
"""How much of a script's output ends its closing message; the whole output is in :data:`SCRIPT_LOG`."""


def closing_message(output: str) -> str:
    """What a shell script "says": its output, or the end of it when longer than :data:`CLOSING_CHARS`.

    The output itself is in :data:`SCRIPT_LOG` (and its excerpt in the tool call's result); repeating
    megabytes of it as the message would store it again. The end is kept, from a line start where one
    is near, and the cut is said.
    """
    if len(output) <= CLOSING_CHARS:
        return output
    tail = output[-CLOSING_CHARS:]
    newline = tail.find("\n")
    if 0 <= newline < len(tail) - 1:
        tail = tail[newline + 1 :]
    return f"[… the first {len(output) - len(tail)} characters are in {SCRIPT_LOG}]\n{tail}"


def _reference(function: ScriptFunction) -> str:
    module = getattr(function, "__module__", None) or "__main__"
    qualname = getattr(function, "__qualname__", None) or type(function).__qualname__
    reference = f"{module}:{qualname}"
    # A lambda or a nested function cannot be imported back; its identity keeps two of them apart.
    return reference if "<" not in qualname else f"{reference}#{id(function):x}"


def script_agent(name: str, script: str | ScriptFunction) -> AgentSpec:
    """An agent entry for a Python eval file or a test: ``agents=[script_agent("fake", "touch done")]``.

    A string is a bash script run in the workdir (the prompt is on stdin and in ``$TRIALBOOK_PROMPT``).
    A function is called with the :class:`AgentTask` (awaited when it is async) and returns its message.
    Build the adapter itself with ``trialbook.agents.create_agent(entry)``.
    """
    if isinstance(script, str):
        return AgentSpec(name=name, options={"script": script})
    reference = _reference(script)
    _FUNCTIONS[reference] = script
    return AgentSpec(name=name, options={"python": reference})


def _resolve(reference: str, source: str) -> ScriptFunction:
    if reference in _FUNCTIONS:
        return _FUNCTIONS[reference]
    module_name, _, qualname = reference.partition(":")
    try:
        found: object = importlib.import_module(module_name)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigError(
            f"{source}: python: cannot load {reference!r} ({exc}); write it as module:function"
        ) from exc
    if not callable(found):
        raise ConfigError(f"{source}: python: {reference!r} is not a function")
    return found


class ScriptAgent(LocalAgent):
    """An :class:`Agent` that runs a bash script or a Python function instead of a model."""

    def __init__(self, name: str, script: str | ScriptFunction, cost_usd: float | None = 0.0) -> None:
        self._name = name
        self.script = script
        # What each run reports as its cost: 0.0 by default (no model), a number to exercise budgets, or
        # None to stand in for an agent that reports no cost.
        self.cost_usd = cost_usd

    @property
    def name(self) -> str:
        """The name the eval file gave this agent."""
        return self._name

    async def run(self, task: AgentTask) -> AgentResult:
        """Run the script once; its exit status (or exception) decides ``success``."""
        started = time.monotonic()
        if isinstance(self.script, str):
            step, stop_reason, said = await self._run_shell(self.script, task)
            shown = self.script
        else:
            step, stop_reason, said = await self._run_function(self.script, task)
            shown = f"python {_reference(self.script)}"
        log = f"$ {shown}\n{step.output}--- {step.error or 'exit code 0'} ---\n"
        atomic_write_text(task.output_dir / SCRIPT_LOG, task.masker.text(log))
        del log  # up to the output limit; the records below carry an excerpt, not another copy
        # A shell script's output was masked as it was read; a function's message is masked here, so
        # the excerpt is cut from masked text like every other cut.
        output = step.output if isinstance(self.script, str) else task.masker.text(step.output)
        step = replace(step, output=output, stored_in=SCRIPT_LOG)
        result = local_result(
            agent_name=self.name, task=task, steps=[step], final_message=said, success=step.error is None,
            stop_reason=stop_reason, error=step.error, started=started,
        )  # fmt: skip
        return result if self.cost_usd == result.cost_usd else replace(result, cost_usd=self.cost_usd)

    async def _run_shell(self, script: str, task: AgentTask) -> tuple[LocalStep, StopReason, str | None]:
        env = {**task.env, "TRIALBOOK_PROMPT": task.prompt}
        outcome = await run_process(
            [bash_path(), "-c", script],
            cwd=task.workdir,
            env=env,
            timeout_s=task.timeout_s,
            stdin=task.prompt.encode("utf-8"),
            merge_stderr=True,
            capture=task.streams,
            name="script",
            isolation=task.isolation,
        )
        output = outcome.stdout.decode("utf-8", "replace")
        error: str | None = None
        stop_reason: StopReason = "completed"
        if outcome.timed_out:
            error, stop_reason = f"the script timed out after {task.timeout_s:g}s", "timeout"
        elif outcome.returncode != 0:
            error, stop_reason = f"the script exited with code {outcome.returncode}", "execution_error"
        step = LocalStep("script-1", "bash", {"command": script}, output, outcome.returncode, error)
        return step, stop_reason, closing_message(output) if error is None else None

    async def _run_function(
        self, function: ScriptFunction, task: AgentTask
    ) -> tuple[LocalStep, StopReason, str | None]:
        async def call() -> object:
            # A plain function may block; it runs in a thread so other trials keep going.
            plain: Callable[[AgentTask], object] = function
            result = (
                function(task)
                if inspect.iscoroutinefunction(function)
                else await asyncio.to_thread(plain, task)
            )
            return await result if inspect.isawaitable(result) else result

        arguments: JsonValue = {"function": _reference(function)}
        try:
            said = await asyncio.wait_for(call(), task.timeout_s)
        except TimeoutError:
            error = f"the function timed out after {task.timeout_s:g}s"
            return LocalStep("script-1", "python", arguments, "", None, error), "timeout", None
        except Exception as exc:
            error = "".join(traceback.format_exception_only(exc)).strip()
            return LocalStep("script-1", "python", arguments, "", 1, error), "execution_error", None
        if said is not None and not isinstance(said, str):
            error = f"the function returned {type(said).__name__}; return the agent's message as str or None"
            return LocalStep("script-1", "python", arguments, "", 1, error), "execution_error", None
        return LocalStep("script-1", "python", arguments, said or "", 0), "completed", said


def create(spec: AgentSpec) -> Agent:
    """Build a script agent from an entry with ``script:`` (bash) or ``python:`` (``module:function``)."""
    unknown = sorted(set(spec.options) - _OPTIONS)
    if unknown:
        raise ConfigError(
            f"{spec.source}: agent {spec.name!r}: {unknown[0]}: unknown option; a script agent takes "
            "script (or python), env and cost_usd"
        )
    cost = spec.options.get("cost_usd", 0.0)
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0):
        raise ConfigError(
            f"{spec.source}: agent {spec.name!r}: cost_usd: expected a number of dollars >= 0, or null for "
            "an agent whose cost is unknown"
        )
    cost_usd = None if cost is None else float(cost)
    script, python = spec.options.get("script"), spec.options.get("python")
    if (script is None) == (python is None):
        raise ConfigError(f"{spec.source}: agent {spec.name!r}: give exactly one of script or python")
    if script is not None:
        if not isinstance(script, str) or not script.strip():
            raise ConfigError(f"{spec.source}: agent {spec.name!r}: script: expected a non-empty bash script")
        return ScriptAgent(spec.name, script, cost_usd)
    if not isinstance(python, str):
        raise ConfigError(f"{spec.source}: agent {spec.name!r}: python: expected 'module:function'")
    return ScriptAgent(spec.name, _resolve(python, f"{spec.source}: agent {spec.name!r}"), cost_usd)
