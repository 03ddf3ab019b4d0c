"""The ``literal`` agent: follow a guide's shell steps exactly as written, with no model.

All steps run in one bash process, the way a reader pastes them into one terminal, so ``cd``, exported
variables and shell functions carry from one step to the next. Each step is sourced from its own file
(a step with an unclosed quote fails alone instead of swallowing the next one) with ``set -e`` and
``pipefail``; the first failing step ends the shell, and the steps after it are not run. A small
progress file says which step started and how it ended, so a kill at the deadline still tells which step
was running.

The step files bash reads and writes hold the secrets the prompt was rendered with, so they live in a
private folder inside the sandbox's temporary folder, removed when the agent returns. The trial's output
folder only ever receives masked copies (``literal/step-N.sh``, ``step-N.out``, ``progress``), written
when the steps end, time out or are cancelled. ``step-N.out`` is the one whole copy of a step's output:
the tool call's result is an excerpt of it when it is long, and ``literal.log`` (each step's header,
script and exit code, read by the HTML viewer) names the file and its size instead of repeating it.
"""

from __future__ import annotations

import contextlib
import shlex
import shutil
import tempfile
import time
from pathlib import Path

from .._util.fsutil import atomic_write_bytes, atomic_write_text
from .._util.words import plural
from ..errors import ConfigError
from ..evidence import AgentResult, StopReason
from ..sandbox import OutputCapture, bash_path
from ..sandbox.process import ProcessOutcome, run_process
from ._fences import ShellStep, shell_steps
from ._local import LocalAgent, LocalStep, local_result
from ._protocol import Agent, AgentSpec, AgentTask

__all__ = ["LiteralAgent", "create"]

_OPTIONS = frozenset({"env"})  # env is applied by the runner to the sandbox environment

OUTPUT_FOLDER = "literal"
"""The trial folder's folder for the steps: ``step-N.sh`` as run, ``step-N.out`` (the one whole copy of
each step's output, up to ``limits.output``) and ``progress``."""


def _driver(folder: Path, steps: list[ShellStep]) -> str:
    lines = [f"__tb_steps={shlex.quote(str(folder))}"]
    for step in steps:
        i = step.index
        run = f'source "$__tb_steps/step-{i}.sh" > "$__tb_steps/step-{i}.out" 2>&1'
        lines += [f'printf "start {i}\\n" >> "$__tb_steps/progress"', "set -e -o pipefail"]
        if step.may_fail:
            # Marked may-fail: a failure neither ends the shell nor stops the steps after it. In an ||
            # list bash suspends errexit for the whole sourced block, so it runs every line and its
            # status is its last command's.
            lines += ["__tb_rc=0", f"{run} || __tb_rc=$?"]
        else:
            lines += [run, "__tb_rc=$?"]
        lines += [
            "set +e +o pipefail",
            f'printf "end {i} %d\\n" "$__tb_rc" >> "$__tb_steps/progress"',
        ]
        if not step.may_fail:
            lines.append('[ "$__tb_rc" -eq 0 ] || exit "$__tb_rc"')
    return "\n".join(lines) + "\n"


def _progress(folder: Path) -> tuple[int, dict[int, int]]:
    """The last step that started and the exit code of each step that ended."""
    started, ended = 0, {}
    path = folder / "progress"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    for line in text.splitlines():
        parts = line.split()
        if parts[:1] == ["start"]:
            started = int(parts[1])
        elif parts[:1] == ["end"] and len(parts) == 3:
            ended[int(parts[1])] = int(parts[2])
    return started, ended


def _describe(step: ShellStep, total: int) -> str:
    return f"step {step.index} of {total} (line {step.line})"


def _scratch_folder(task: AgentTask) -> Path:
    """A private folder for the raw step files: in the sandbox's TMPDIR when it has one."""
    parent = task.env.get("TMPDIR")
    if parent is None or not Path(parent).is_dir():
        parent = None
    return Path(tempfile.mkdtemp(prefix=".trialbook-literal-", dir=parent))


def _publish_masked(scratch: Path, folder: Path, capture: OutputCapture, outputs: dict[str, bytes]) -> None:
    """Masked copies of the step outputs (as kept for the result, or read now after a cancel) and progress."""
    for path in sorted(scratch.glob("step-*.out")):
        data = outputs.get(path.name)
        with contextlib.suppress(OSError):
            atomic_write_bytes(folder / path.name, data if data is not None else capture.file(path, None))
    with contextlib.suppress(OSError):
        progress = scratch / "progress"
        atomic_write_bytes(folder / progress.name, capture.masker.bytes(progress.read_bytes()))


class LiteralAgent(LocalAgent):
    """Runs a rendered prompt's fenced shell blocks in order in the sandbox."""

    @property
    def name(self) -> str:
        """Always ``literal``."""
        return "literal"

    async def run(self, task: AgentTask) -> AgentResult:
        """Run every step until one fails or the deadline passes; see the module docstring."""
        started = time.monotonic()
        steps = shell_steps(task.prompt)
        folder = task.output_dir / OUTPUT_FOLDER
        folder.mkdir(parents=True, exist_ok=True)
        scratch = _scratch_folder(task)
        capture = task.streams
        outputs: dict[str, bytes] = {}
        try:
            for step in steps:
                (scratch / f"step-{step.index}.sh").write_text(step.script, encoding="utf-8")
                atomic_write_text(folder / f"step-{step.index}.sh", task.masker.text(step.script))
            try:
                outcome = await run_process(
                    [bash_path(), "-c", _driver(scratch, steps)],
                    cwd=task.workdir,
                    env=task.env,
                    timeout_s=task.timeout_s,
                    merge_stderr=True,
                    capture=capture,
                    name="shell",
                    isolation=task.isolation,
                )
            except OSError as exc:
                message = f"could not start bash for the literal steps: {exc}"
                return local_result(
                    agent_name=self.name, task=task, steps=[], final_message=None, success=False,
                    stop_reason="execution_error", error=message, started=started,
                )  # fmt: skip
            for step in steps:
                path = scratch / f"step-{step.index}.out"
                if path.exists():  # read in chunks, masked and cut to the limit like any stream
                    outputs[path.name] = capture.file(path, f"step-{step.index}")
            return self._result(task, steps, scratch, outcome, started, outputs)
        finally:
            # Also on cancellation: whatever the steps printed so far is kept, masked, and the raw
            # files go.
            _publish_masked(scratch, folder, capture, outputs)
            shutil.rmtree(scratch, ignore_errors=True)

    def _result(
        self,
        task: AgentTask,
        steps: list[ShellStep],
        folder: Path,
        outcome: ProcessOutcome,
        started: float,
        outputs: dict[str, bytes],
    ) -> AgentResult:
        last_started, ended = _progress(folder)
        records: list[LocalStep] = []
        transcript: list[str] = []
        for step in steps[:last_started]:
            output = outputs.get(f"step-{step.index}.out", b"").decode("utf-8", "replace")
            code = ended.get(step.index, None if outcome.timed_out else outcome.returncode)
            error = f"timed out after {task.timeout_s:g}s" if code is None else None
            stored_in = f"{OUTPUT_FOLDER}/step-{step.index}.out"
            records.append(
                LocalStep(
                    f"step-{step.index}", "bash", {"command": step.script}, output, code, error, stored_in
                )
            )
            status = error or f"exit code {code}"
            size = len(outputs.get(f"step-{step.index}.out", b""))
            transcript.append(f"## {_describe(step, len(steps))}, {step.language}\n{step.script}")
            transcript.append(f"--- output: {stored_in}, {plural(size, 'byte')} ---\n--- {status} ---\n")
        shell_output = outcome.stdout.decode("utf-8", "replace")
        if shell_output:
            transcript.append(f"--- shell ---\n{shell_output}")
        stop_reason: StopReason = "completed"
        ran_all = "Ran the one step." if len(steps) == 1 else f"Ran all {len(steps)} steps."
        success, error, message = True, None, ran_all
        if not steps:
            message = "The prompt has no bash, sh, shell or console code block; nothing was run."
        elif last_started == 0:
            error = f"the literal steps' shell stopped before the first step: {shell_output.strip()}"
            success, stop_reason, message = False, "execution_error", f"Stopped: {error}."
        elif outcome.timed_out:
            current = steps[last_started - 1]
            error = f"timed out after {task.timeout_s:g}s during {_describe(current, len(steps))}"
            success, stop_reason, message = False, "timeout", f"Stopped: {error}."
        elif last_started < len(steps) or (ended.get(last_started) != 0 and not steps[-1].may_fail):
            current = steps[last_started - 1]
            code = records[-1].exit_code
            skipped = len(steps) - last_started
            what = "failed with" if code != 0 else "ended the shell with"
            later = f"; {plural(skipped, 'later step')} not run" if skipped else ""
            # The shell ran to its end, but the guide did not work: the trial fails on it (the runner
            # adds a failed "guide steps" check).
            error = f"{_describe(current, len(steps))} {what} exit code {code}{later}"
            success, message = False, f"{error[0].upper()}{error[1:]}."
        allowed = [s.index for s in steps[:last_started] if s.may_fail and ended.get(s.index, 0) != 0]
        if allowed and success:
            message += f" Failed as the guide allows (may-fail): step {', '.join(map(str, allowed))}."
        transcript.append(f"=== {message} ===\n")
        atomic_write_text(task.output_dir / "literal.log", task.masker.text("\n".join(transcript)))
        return local_result(
            agent_name=self.name, task=task, steps=records, final_message=message, success=success,
            stop_reason=stop_reason, error=error, started=started,
        )  # fmt: skip


def create(spec: AgentSpec) -> Agent:
    """Build the literal agent; it takes no options but ``env``, and no model."""
    unknown = sorted(set(spec.options) - _OPTIONS)
    if unknown:
        raise ConfigError(
            f"{spec.source}: agent {spec.name!r}: {unknown[0]}: unknown option; the literal agent runs the "
            "prompt's shell blocks as written and takes only env"
        )
    return LiteralAgent()
