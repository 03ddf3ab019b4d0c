"""``manifest.json``: what a run was asked to do, what it decided for every eval × agent and why (pure).

The run folder is the contract between running and publishing: a reader (``--last-failed``, reports, a
publish step holding no agent credentials) learns from the manifest what was selected, what ran, what was
cached, skipped or filtered and for what reason, and where each pair's transcripts are — without the
agents or the eval files. The same document is what ``trialbook eval --json`` prints. Its shape is
documented in docs/runs.md and docs/schemas/run.schema.json; ``version`` changes only when a field is
removed or changes meaning (new fields may appear).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import UsageError
from ..evidence import JsonObject, JsonValue, read_json
from ._arms import comparisons
from ._engine import EntryResult
from ._judges import uses_judges
from ._options import RunOptions
from ._plan import PlanEntry
from ._suite import iso_utc
from ._triggers import trigger_groups
from ._versions import version_drift

__all__ = ["MANIFEST", "MANIFEST_VERSION", "build_manifest", "failed_pairs", "pair_json", "read_manifest"]

MANIFEST = "manifest.json"
MANIFEST_VERSION = 1


def _verdict(entry: PlanEntry, result: EntryResult | None) -> str | None:
    if result is not None:
        return result.verdict if result.outcomes else "incomplete"
    if entry.action == "cached":
        verdict = getattr(entry.last, "verdict", None)
        return verdict if isinstance(verdict, str) else None
    return None


def pair_json(entry: PlanEntry, result: EntryResult | None = None) -> JsonObject:
    """One eval × agent: the decision and its reason, and (when it ran) how it went."""
    ran: JsonValue = None
    if result is not None:
        ran = {
            "passed": result.passed,
            "ran": len(result.outcomes),
            "unstarted": result.unstarted,
            "cost_usd": result.cost_usd,
            "duration_s": round(result.duration_s, 3),
            "failures": list(result.failures),
            "folder": f"evals/{entry.spec.id}/{entry.label}",
            # Only on evals with judge checks, so other pairs keep the shape they had.
            **({"judge_cost_usd": result.judge_cost_usd} if uses_judges(entry.spec.assertions) else {}),
        }
    return {
        "id": entry.spec.id,
        "agent": entry.label,
        "agent_name": entry.agent.name,
        "eval_file": str(entry.spec.source),
        "action": entry.action,
        "reason": entry.reason,
        "trials": entry.spec.trials,
        "cache_key": entry.cache_key,
        "trials_key": entry.trials_key,
        "prompt_sha256": entry.prompt_sha256,
        "agent_version": entry.agent_version,
        "model": entry.model,
        "verdict": _verdict(entry, result),
        "result": ran,
        **({"arm": entry.arm} if entry.arm is not None else {}),
        **({"rescored_from": result.rescored_from} if result is not None and result.rescored_from else {}),
    }


def _selection(options: RunOptions) -> JsonObject:
    shard = f"{options.shard[0]}/{options.shard[1]}" if options.shard else None
    return {
        "paths": [str(path) for path in options.paths],
        "agents": list(options.agents),
        "filters": list(options.filters),
        "shard": shard,
        "changed": options.changed,
        "base": options.base if options.changed else None,
        "force": options.force,
        "last_failed": options.last_failed,
        "trials": options.trials,
    }


def build_manifest(
    plan: Sequence[PlanEntry],
    results: Sequence[EntryResult],
    options: RunOptions,
    *,
    run_id: str,
    started_at: float,
    finished_at: float,
    git_commit: str | None,
    history_lines: Sequence[JsonObject] = (),
    base_lines: Mapping[str, object] | None = None,
) -> JsonObject:
    """The manifest of one run, in plan order, with the history lines it records (see docs/history.md)."""
    by_key = {result.entry.key: result for result in results}
    return {
        "kind": "run",
        "version": MANIFEST_VERSION,
        "run_id": run_id,
        "trialbook_version": __version__,
        "started_at": iso_utc(started_at),
        "finished_at": iso_utc(finished_at),
        "git_commit": git_commit,
        "selection": _selection(options),
        "pairs": [pair_json(entry, by_key.get(entry.key)) for entry in plan],
        "comparisons": [found.to_json() for found in comparisons(plan, results)],
        "versions": [drift.to_json() for drift in version_drift(plan, results)],
        "triggers": [group.to_json() for group in trigger_groups(plan, results, base_lines)],
        "history_lines": list(history_lines),
    }


def read_manifest(folder: Path) -> Mapping[str, Any]:
    """The manifest of the run in ``folder``, or a clear error naming the file."""
    path = folder / MANIFEST
    if not path.is_file():
        raise UsageError(f"{folder} holds no {MANIFEST}: it is not a complete trialbook run folder")
    data = read_json(path)
    if not isinstance(data, dict) or data.get("kind") != "run" or data.get("version") != MANIFEST_VERSION:
        version = data.get("version") if isinstance(data, dict) else None
        raise UsageError(f"{path}: version {version!r} is not a run manifest version {MANIFEST_VERSION}")
    return data


def failed_pairs(manifest: Mapping[str, Any]) -> set[str]:
    """``<id>::<agent>`` of every pair whose verdict was ``fail`` or ``error`` (cached failures included)."""
    pairs = manifest.get("pairs")
    found: set[str] = set()
    for pair in pairs if isinstance(pairs, list) else []:
        # A without arm is never a failure; its with arm brings it back with it (see build_plan).
        if (
            isinstance(pair, dict)
            and pair.get("verdict") in ("fail", "error")
            and pair.get("arm") != "without"
        ):
            found.add(f"{pair.get('id')}::{pair.get('agent')}")
    return found
