"""Per-trial transcript folders: evidence, call log and the agent's raw output, all masked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from .._util.fsutil import atomic_write_bytes
from ..evidence import (
    SCHEMA_VERSION,
    AgentResult,
    AssertionRecord,
    JsonObject,
    JsonValue,
    dump_result,
    publish_json,
)
from ..masking import Masker

if TYPE_CHECKING:
    from ..agents.judge_client import JudgeCall

__all__ = ["mask_call_log", "mask_folder", "write_json", "write_trial_files"]


def write_json(path: Path, value: JsonObject, masker: Masker) -> None:
    """Publish one JSON document with its string values masked (keys are structure and stay as they are)."""
    masked = masker.json(value)
    assert isinstance(masked, dict)  # masking keeps an object an object
    publish_json(path, masked)


def mask_call_log(data: bytes, masker: Masker) -> bytes:
    """The call log with every argument, folder and error masked, line by line; keys and layout kept."""
    if not masker.active:
        return data
    lines = data.split(b"\n")
    out = []
    for line in lines:
        text = line.decode("utf-8", errors="replace")
        masked = masker.json_line(text)
        out.append(line if masked == text else masked.encode("utf-8"))
    return b"\n".join(out)


def _masked_file(path: Path, data: bytes, masker: Masker) -> bytes:
    if path.suffix in (".jsonl", ".json"):
        # JSON an adapter saved is masked value by value, so the file still parses afterwards.
        return mask_call_log(data, masker) if path.suffix == ".jsonl" else _masked_json(data, masker)
    return masker.bytes(data)


def _masked_json(data: bytes, masker: Masker) -> bytes:
    text = data.decode("utf-8", errors="replace")
    masked = masker.json_line(text)
    return data if masked == text else masked.encode("utf-8") + b"\n"


def mask_folder(folder: Path, masker: Masker) -> None:
    """Mask what adapters wrote into a trial folder, in place and atomically.

    Adapters mask as they write; this pass catches a file an adapter wrote raw, so nothing in the results
    folder is left unmasked whatever the adapter did.
    """
    if not masker.active:
        return
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            masked = _masked_file(path, data, masker)
            if masked != data:
                atomic_write_bytes(path, masked)


def write_trial_files(
    folder: Path,
    result: AgentResult,
    assertions: Sequence[AssertionRecord],
    calls: bytes | None,
    masker: Masker,
    *,
    notes: Sequence[str] = (),
    output_truncated: Mapping[str, int] | None = None,
    judge_calls: Sequence[JudgeCall] = (),
    pairwise_shown: Sequence[tuple[int, str]] = (),
) -> None:
    """Write ``result.json`` and ``calls.jsonl`` next to the adapter's output.

    ``result`` and ``assertions`` are already masked; the call log comes raw from the sandbox and is
    masked here, before it reaches the results folder. ``notes`` are what a reader should know that is
    neither a failed check nor evidence, such as a shim that was declared and never called.
    ``output_truncated`` is how many bytes each captured stream lost to the output limit (``None``:
    the adapter captured no stream through trialbook, so it is unknown). ``calls`` is ``None`` when the
    trial had no shims: nothing watched its commands, so no ``calls.jsonl`` is written (an empty one
    would claim that the agent called nothing). ``judge_calls`` are the requests its ``judge`` checks
    made, kept under ``judge_calls`` (only when there were any, so other trials keep the shape they had);
    ``pairwise_shown`` what its ``pairwise`` judge checks showed, kept as ``pairwise_shown`` (the same).
    """
    mask_folder(folder, masker)
    if calls is not None:
        atomic_write_bytes(folder / "calls.jsonl", mask_call_log(calls, masker))
    document: dict[str, JsonValue] = {
        "schema_version": SCHEMA_VERSION,
        "assertions": [dict(asdict(record)) for record in assertions],
        "notes": list(notes),
        "output_truncated": None if output_truncated is None else dict(output_truncated),
        "result": dump_result(result),
    }
    if judge_calls:
        from ._judges import judge_call_json

        masked = masker.json([judge_call_json(call) for call in judge_calls])
        document["judge_calls"] = masked
    if pairwise_shown:
        shown: list[JsonValue] = [{"check": index, "shown": text} for index, text in pairwise_shown]
        document["pairwise_shown"] = masker.json(shown)
    publish_json(folder / "result.json", document)
