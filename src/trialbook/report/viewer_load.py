"""Read a run folder for the viewer: the one place that knows where a run's files are.

The viewer's renderer is pure; this module is its edge. It finds the run folder a user means (a kept run,
the ``latest`` one, a results folder or a ``suite.json``), loads the suite, and reads what each trial
folder holds beside it (call log, sandbox changes, raw files, the literal agent's step headers, the files
that keep a local agent's whole tool output: a record holds an excerpt of a long one). Every
file was masked by the run that wrote it; nothing here adds unmasked text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from ..evidence import JsonObject, JsonValue, SuiteReport, latest_run, load_suite

__all__ = ["RunData", "TrialFiles", "load_run", "locate_run", "trial_folder"]

SUITE_FILE = "suite.json"
_STEP = re.compile(r"^## (step (\d+) of (\d+) \(line (\d+)\))", re.MULTILINE)
MAX_RAW_FILES = 200
"""Raw files linked per trial; a trial folder with more lists the first ones by name."""


@dataclass(frozen=True)
class TrialFiles:
    """What a trial folder holds beside ``suite.json``'s record of the trial."""

    folder: Path
    calls: tuple[JsonObject, ...] = ()
    call_log: bool = False
    """Whether the trial kept a ``calls.jsonl``: without one (no shims), its commands were not watched."""
    call_log_problems: tuple[str, ...] = ()
    changes: JsonObject | None = None
    raw_files: tuple[str, ...] = ()
    literal_steps: dict[str, str] = field(default_factory=dict)
    output_files: dict[str, str] = field(default_factory=dict)
    """The file (relative to ``folder``) that keeps a local tool call's whole output, by call id."""


@dataclass(frozen=True)
class RunData:
    """A loaded run: the folder, its suite and the files of each trial keyed by (test id, trial number)."""

    folder: Path
    suite: SuiteReport
    suite_bytes: int
    trials: dict[tuple[str, int], TrialFiles]


def locate_run(path: Path | None, cwd: Path) -> Path:
    """The ``suite.json`` that ``path`` means: the file itself, or the suite of a run or project folder.

    Without ``path`` (or with a project folder) the latest kept run ``.trialbook/runs/latest`` is taken,
    then the results folder ``.trialbook/results``; a runs folder means its ``latest`` run.

    Raises:
        UsageError: when no ``suite.json`` is found, naming every place looked at.
    """
    base = cwd if path is None else path
    if base.is_file():
        return base
    looked = [base]
    for runs in (base, base / ".trialbook" / "runs"):
        latest = latest_run(runs)
        looked.append(latest if latest is not None else runs / "latest")
    looked.append(base / ".trialbook" / "results")
    for folder in looked:
        if (folder / SUITE_FILE).is_file():
            return (folder / SUITE_FILE).resolve()
    where = ", ".join(str(folder / SUITE_FILE) for folder in looked)
    raise UsageError(
        f"no {SUITE_FILE} found (looked at {where}); give a run or results folder written by "
        "`trialbook eval`, or run `trialbook eval` first"
    )


def trial_folder(run: Path, test_id: str, trial: int) -> Path:
    """Where the runner writes trial ``trial`` of the eval × agent ``test_id`` (``<eval>::<agent>``)."""
    eval_id, _, agent = test_id.partition("::")
    return run / "evals" / eval_id / agent / f"trial-{trial}"


def _calls(path: Path) -> tuple[tuple[JsonObject, ...], tuple[str, ...]]:
    calls: list[JsonObject] = []
    problems: list[str] = []
    for number, line in enumerate(path.read_text("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            problems.append(f"{path.name} line {number} is not JSON (a torn write?)")
            continue
        if isinstance(record, dict):
            calls.append(record)
        else:
            problems.append(f"{path.name} line {number} is not a JSON object")
    return tuple(calls), tuple(problems)


def _changes(path: Path) -> JsonObject | None:
    if not path.is_file():
        return None
    try:
        value: JsonValue = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return _without_content(value) if isinstance(value, dict) else None


def _without_content(changes: JsonObject) -> JsonObject:
    """The record as the page shows it: the diffs, not the whole files kept for rebuilding the sandbox."""
    files = changes.get("files")
    if not isinstance(files, list):
        return changes
    shown: list[JsonValue] = []
    for entry in files:
        final = entry.get("rebuild") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and isinstance(final, dict):
            kept = {key: value for key, value in final.items() if key not in ("text", "base64")}
            entry = {**entry, "rebuild": kept}
        shown.append(entry)
    return {**changes, "files": shown}


def _raw_files(folder: Path) -> tuple[str, ...]:
    if not folder.is_dir():
        return ()
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return tuple(names[:MAX_RAW_FILES])


def _literal_steps(folder: Path) -> dict[str, str]:
    log = folder / "literal.log"
    if not log.is_file():
        return {}
    text = log.read_text("utf-8", "replace")
    return {f"step-{match.group(2)}": match.group(1) for match in _STEP.finditer(text)}


def _output_files(folder: Path) -> dict[str, str]:
    """Where a script agent (``script.log``) or a literal step (``literal/step-N.out``) kept its output.

    Their tool calls' records hold an excerpt of a long output naming that file; the viewer links it.
    """
    files = {"script-1": "script.log"} if (folder / "script.log").is_file() else {}
    steps = folder / "literal"
    if steps.is_dir():
        files.update({path.stem: f"literal/{path.name}" for path in steps.glob("step-*.out")})
    return files


def _trial_files(folder: Path) -> TrialFiles:
    log = folder / "calls.jsonl"
    kept = log.is_file()
    calls, problems = _calls(log) if kept else ((), ())
    return TrialFiles(
        folder=folder,
        calls=calls,
        call_log=kept,
        call_log_problems=problems,
        changes=_changes(folder / "changes.json"),
        raw_files=_raw_files(folder),
        literal_steps=_literal_steps(folder),
        output_files=_output_files(folder),
    )


def load_run(suite_path: Path) -> RunData:
    """Load a suite and the files of each of its trials beside it (missing files read as absent)."""
    folder = suite_path.parent
    suite = load_suite(suite_path)
    trials: dict[tuple[str, int], TrialFiles] = {}
    for test in suite.tests:
        for index, execution in enumerate(test.executions, 1):
            number = execution.trial if execution.trial is not None else index
            trials[(test.id, number)] = _trial_files(trial_folder(folder, test.id, number))
    return RunData(folder=folder, suite=suite, suite_bytes=suite_path.stat().st_size, trials=trials)
