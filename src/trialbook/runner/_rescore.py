"""Re-scoring: the current assertions checked over a kept run's recorded trials, no agent started.

Each trial's final sandbox is rebuilt from the eval's template, its placed inputs and the trial's
``changes.json``; its ``calls.jsonl`` and ``result.json`` are read back; the assertions run over that
(see :mod:`._rechecked`). A pair is re-scored only when every one of its recorded trials can be: a
verdict from some of them would not be the verdict of the eval.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import Any

from .._util.blocking import run_blocking
from ..agents import Agent
from ..evidence import AgentResult, load_result, read_json
from ..masking import Masker, masked_record
from ..sandbox import (
    CHANGES_FILE,
    Rebuilt,
    SandboxTrial,
    TemplateFilter,
    apply_changes,
    copy_tree,
    parse_call_log,
    remove_tree,
)
from ..scoring.verdict import trial_passed
from ..select import CACHEABLE_VERDICTS
from ._deadline import within
from ._engine import EntryResult, trial_request
from ._explain import explain_trial
from ._judges import RunJudges, TrialJudges, changes_diff, judge_call_from_json, uses_judges
from ._manifest import MANIFEST
from ._outputs import write_trial_files
from ._placing import place_inputs, skills_folder
from ._plan import PlanEntry, RescoreSource
from ._trial import TrialOutcome, trial_cost
from ._verdicts import pairwise_shown, unused_shim_note, unused_shims

__all__ = [
    "NOT_RESCORABLE",
    "RescoredPair",
    "plan_rescores",
    "reasons_text",
    "recorded_sources",
    "rescore_pair",
    "write_rescored",
]


NOT_RESCORABLE = "not_rescorable"
"""How a pair ``trialbook rescore`` could not re-check is reported (its reason starts with it)."""


@dataclass(frozen=True)
class RescoredPair:
    """One pair re-checked: its result, or (``result`` ``None``) why its trials cannot be."""

    result: EntryResult | None
    reasons: tuple[str, ...] = ()


def _pair_folder(run: Path, pair: Mapping[str, Any]) -> Path | None:
    ran = pair.get("result")
    folder = ran.get("folder") if isinstance(ran, dict) else None
    if not isinstance(folder, str):
        return None
    rel = PurePosixPath(folder)
    if rel.is_absolute() or ".." in rel.parts or not rel.parts or rel.parts[0] != "evals":
        return None
    return run / rel


def _settled(pair: Mapping[str, Any]) -> bool:
    """Whether the pair's every planned trial finished with a verdict a cache would serve."""
    ran = pair.get("result")
    if pair.get("verdict") not in CACHEABLE_VERDICTS or not isinstance(ran, dict):
        return False
    return ran.get("ran") == pair.get("trials") and ran.get("unstarted") == 0


def recorded_sources(runs: Iterable[Path]) -> dict[tuple[str, str, str], RescoreSource]:
    """Recorded pairs by ``(eval id, agent, trials key)``, the first of ``runs`` (newest) winning.

    A run folder that cannot be read, and a pair without a trials key or without all its trials
    settled, is passed over: it is no source, not an error.
    """
    found: dict[tuple[str, str, str], RescoreSource] = {}
    for run in runs:
        try:
            manifest = read_json(run / MANIFEST)
        except Exception:  # an unreadable kept run is simply no source
            continue
        pairs = manifest.get("pairs") if isinstance(manifest, dict) else None
        run_id = manifest.get("run_id") if isinstance(manifest, dict) else None
        if not isinstance(pairs, list) or not isinstance(run_id, str):
            continue
        for pair in pairs:
            if not isinstance(pair, dict) or pair.get("action") != "run" or not _settled(pair):
                continue
            key = (pair.get("id"), pair.get("agent"), pair.get("trials_key"))
            folder = _pair_folder(run, pair)
            cache_key = pair.get("cache_key")
            if all(isinstance(part, str) for part in key) and folder is not None:
                source = RescoreSource(run_id, folder, cache_key if isinstance(cache_key, str) else None)
                found.setdefault(key, source)  # type: ignore[arg-type]
    return found


def _read_trial(folder: Path) -> tuple[AgentResult, Any, Mapping[str, Any], bytes | None]:
    """The recorded result, the result document, the change record and the raw call log (or ``None``)."""
    document = read_json(folder / "result.json")
    if not isinstance(document, dict):
        raise ValueError("result.json is not a JSON object")
    result = load_result(document.get("result"), "result.json: result")
    changes = read_json(folder / CHANGES_FILE)
    if not isinstance(changes, dict):
        raise ValueError(f"{CHANGES_FILE} is not a JSON object")
    log = folder / "calls.jsonl"
    return result, document, changes, log.read_bytes() if log.is_file() else None


def _rebuild(entry: PlanEntry, agent: Agent, changes: Mapping[str, Any], workdir: Path) -> Rebuilt:
    spec = entry.spec
    keep = TemplateFilter.of(spec.template_exclude)
    if spec.template is not None:
        copy_tree(spec.template, workdir, lambda rel, is_dir: keep.kept(rel, is_dir=is_dir))
    else:
        workdir.mkdir()
    place_inputs(workdir, spec.instructions, spec.skills, skills_folder(agent))
    return apply_changes(workdir, changes)


def _flag(changes: Mapping[str, Any], name: str) -> bool:
    """A masking flag of the record; unknown (an older record) counts as masked."""
    rebuild = changes.get("rebuild")
    return not isinstance(rebuild, dict) or rebuild.get(name) is not False


def _asker(
    entry: PlanEntry, judges: RunJudges | None, document: Mapping[str, Any], changes: Mapping[str, Any]
) -> TrialJudges | None:
    """The trial's judges, told the answers the trial recorded: an unchanged question is not paid again."""
    if judges is None or not uses_judges(entry.spec.assertions):
        return None
    recorded = document.get("judge_calls")
    found = [judge_call_from_json(item) for item in recorded] if isinstance(recorded, list) else []
    judges.remember([call for call in found if call is not None])
    return judges.for_trial(changes_diff(dict(changes)))


def _rescore_trial(
    entry: PlanEntry,
    agent: Agent,
    number: int,
    folder: Path,
    masker: Masker,
    judges: RunJudges | None = None,
) -> TrialOutcome | str:
    from ._rechecked import RecheckedTrial, recheck

    try:
        result, document, changes, raw_calls = _read_trial(folder)
    except Exception as exc:  # a broken record makes the trial not re-scorable
        return f"trial {number}: its record cannot be read: {exc}"
    if entry.spec.shims and raw_calls is None:
        return f"trial {number}: the eval has shims but no calls.jsonl was recorded"
    log = parse_call_log(raw_calls or b"", source=str(folder / "calls.jsonl"))
    began = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="trialbook-rescore-"))
    try:
        workdir = scratch / "work"
        try:
            rebuilt = _rebuild(entry, agent, changes, workdir)
        except (OSError, ValueError) as exc:
            return f"trial {number}: its sandbox cannot be rebuilt: {exc}"
        inner = SandboxTrial(workdir=workdir, env={}, result=result, calls=log.calls)
        trial = RecheckedTrial(
            inner,
            rebuilt,
            TemplateFilter.of(entry.spec.template_exclude),
            result_masked=_flag(changes, "result_masked"),
            calls_masked=raw_calls is not None and _flag(changes, "calls_masked"),
        )
        deadline = entry.spec.check_deadline_s
        asker = _asker(entry, judges, document, changes)
        try:
            records, reasons = run_blocking(
                within(functools.partial(recheck, entry.spec.assertions, trial, asker), deadline)
            )
        except TimeoutError:
            return f"trial {number}: the checks did not finish within the check deadline of {deadline:g}s"
        shown = pairwise_shown(entry.spec.assertions, trial, asker, masker)  # from the rebuilt sandbox
    finally:
        remove_tree(scratch)
    if reasons:
        return "; ".join(f"trial {number}: {reason}" for reason in reasons)
    records = tuple(masked_record(record, masker) for record in records)
    truncated = document.get("output_truncated")
    cost = trial_cost(result)
    request = trial_request(entry, number, folder)
    return TrialOutcome(
        request=request,
        result=result,
        assertions=records,
        calls=tuple(log.calls),
        passed=trial_passed(result, [record.passed for record in records]),
        cost_usd=cost[0],
        cost_estimated=cost[1],
        # The agent's own time when it reported one (what running the trial takes), else this check's.
        duration_s=result.duration_ms / 1000 if result.duration_ms is not None else time.monotonic() - began,
        sandbox_path=None,
        unused_shims=unused_shims(request.shims, tuple(log.calls)),
        output_truncated=dict(truncated) if isinstance(truncated, dict) else None,
        judge_calls=tuple(asker.calls) if asker is not None else (),
        pairwise_shown=shown,
    )


def rescore_pair(
    entry: PlanEntry, source: RescoreSource, agent: Agent, masker: Masker, judges: RunJudges | None = None
) -> RescoredPair:
    """Check ``entry``'s current assertions over every trial ``source`` recorded.

    The outcomes' folders are the source's trial folders until :func:`write_rescored` copies them.
    """
    outcomes: list[TrialOutcome] = []
    reasons: list[str] = []
    for number in range(1, entry.spec.trials + 1):
        folder = source.folder / f"trial-{number}"
        if not folder.is_dir():
            reasons.append(f"trial {number}: {folder} is missing")
            break
        found = _rescore_trial(entry, agent, number, folder, masker, judges)
        if isinstance(found, str):
            reasons.append(found)
            break  # one trial that cannot be re-checked settles the pair: the rest need not be read
        outcomes.append(found)
    if reasons:
        return RescoredPair(None, tuple(reasons))
    return RescoredPair(EntryResult(entry, outcomes=outcomes, rescored_from=source.run_id))


def _copy_record(source: Path, target: Path) -> None:
    """Copy the trial folder's regular files (not ``result.json``, which is written anew).

    The folder is data from a run folder: no link is followed or copied, and nothing but a regular
    file (never a FIFO, which would block the copy) is opened.
    """
    for folder, _, names in os.walk(source, followlinks=False):
        for name in names:
            path = Path(folder, name)
            rel = path.relative_to(source)
            if rel.as_posix() == "result.json" or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel, follow_symlinks=False)


def write_rescored(result: EntryResult, results_dir: Path, masker: Masker) -> EntryResult:
    """Write the re-checked trials into ``results_dir`` as a run writes trials; return them moved there.

    The recorded files (call log, changes, the agent's raw output) are copied as they are, already
    masked; ``result.json`` is written anew with the new checks.
    """
    entry = result.entry
    moved: list[TrialOutcome] = []
    for outcome in result.outcomes:
        source = outcome.request.folder
        target = results_dir / "evals" / entry.spec.id / entry.label / f"trial-{outcome.request.trial}"
        target.mkdir(parents=True, exist_ok=True)
        _copy_record(source, target)
        explanation = None
        if not outcome.passed:
            explanation = explain_trial(
                outcome.result, outcome.assertions, outcome.calls, masker,
                timeout_s=entry.spec.timeout_s, folder=target, truncated=outcome.output_truncated,
            )  # fmt: skip
        notes = [unused_shim_note(name) for name in outcome.unused_shims]
        write_trial_files(
            target, outcome.result, outcome.assertions, None, masker,
            notes=notes, output_truncated=outcome.output_truncated, judge_calls=outcome.judge_calls,
            pairwise_shown=outcome.pairwise_shown,
        )  # fmt: skip
        request = replace(outcome.request, folder=target)
        moved.append(replace(outcome, request=request, explanation=explanation))
    return replace(result, outcomes=moved)


def reasons_text(reasons: Sequence[str]) -> str:
    """One line for a report: the first reason, and how many more."""
    more = f" (and {len(reasons) - 1} more)" if len(reasons) > 1 else ""
    return f"{reasons[0]}{more}" if reasons else ""


def _explicit_reason(entry: PlanEntry, run_id: str, in_run: frozenset[tuple[str, str]]) -> str:
    if (entry.spec.id, entry.label) not in in_run:
        return f"{NOT_RESCORABLE}: run {run_id} did not run it"
    return (
        f"{NOT_RESCORABLE}: the eval changed beyond its assertions since run {run_id} (prompt, agent, "
        "template, inputs or trial settings), or that run did not finish all its trials: run it again"
    )


def plan_rescores(
    plan: Sequence[PlanEntry],
    sources: Mapping[tuple[str, str, str], RescoreSource],
    agents: Any,
    masker: Masker,
    *,
    explicit: tuple[str, frozenset[tuple[str, str]]] | None = None,
    judges: RunJudges | None = None,
) -> tuple[list[PlanEntry], dict[str, EntryResult]]:
    """Re-check every ``run`` entry a recorded source serves; the rest keep their action.

    ``agents`` gives an entry's adapter (``AgentPool.get``; nothing is started). With ``explicit``
    (the run id ``trialbook rescore`` was given, and the ``(id, agent)`` pairs it ran) no agent may run:
    an entry that cannot be re-checked is ``filtered`` with a reason starting ``not_rescorable``.
    Without it (the cache), such an entry runs as planned, its reason saying why it was not re-scored.
    """
    out: list[PlanEntry] = []
    done: dict[str, EntryResult] = {}
    for entry in plan:
        if entry.action != "run" or entry.control:
            out.append(entry)
            continue
        key = (entry.spec.id, entry.label, entry.trials_key or "")
        source = sources.get(key)
        if explicit is None and source is not None and source.cache_key == entry.cache_key:
            source = None  # nothing changed at all: whether that is cached is history's to say
        found = (
            rescore_pair(entry, source, agents(entry.agent), masker, judges) if source is not None else None
        )
        if found is None or found.result is None:
            if explicit is not None:
                why = _explicit_reason(entry, *explicit) if found is None else reasons_text(found.reasons)
                reason = why if found is None else f"{NOT_RESCORABLE}: {why}"
                entry = replace(entry, action="filtered", reason=reason)
            elif found is not None and source is not None:
                why = reasons_text(found.reasons)
                entry = replace(entry, reason=f"{entry.reason}; not rescored from run {source.run_id}: {why}")
            out.append(entry)
            continue
        assert source is not None
        reason = (
            f"rescored: only the assertions changed since run {source.run_id}; its recorded trials "
            "were checked again, no agent started"
        )
        entry = replace(entry, rescore=source, reason=reason)
        done[entry.key] = replace(found.result, entry=entry)
        out.append(entry)
    return out, done
