"""Per-trial transcript folders: evidence, call log and the agent's raw output, all masked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from ..evidence import (
    SCHEMA_VERSION,
    AgentResult,
    AssertionRecord,
    JsonObject,
    JsonValue,
    dump_result,
    publish_json,
)
from ..fsutil import atomic_write_bytes
from ..masking import Masker

__all__ = ["mask_folder", "write_json", "write_trial_files"]


def write_json(path: Path, value: JsonObject, masker: Masker) -> None:
    """Mask one JSON document and publish it the way evidence is published (atomic, clear errors)."""
    masked = masker.json(value)
    assert isinstance(masked, dict)  # masking keeps an object an object
    publish_json(path, masked)


def mask_folder(folder: Path, masker: Masker) -> None:
    """Mask secrets in every file an adapter wrote into a trial folder, in place and atomically."""
    if not masker.active:
        return
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            masked = masker.bytes(data)
            if masked != data:
                atomic_write_bytes(path, masked)


def write_trial_files(
    folder: Path,
    result: AgentResult,
    assertions: Sequence[AssertionRecord],
    calls: bytes,
    masker: Masker,
    *,
    notes: Sequence[str] = (),
) -> None:
    """Write ``result.json`` and ``calls.jsonl`` next to the adapter's raw output, masking all of it.

    ``notes`` are what a reader should know that is neither a failed check nor evidence, such as a shim
    that was declared and never called.
    """
    mask_folder(folder, masker)
    atomic_write_bytes(folder / "calls.jsonl", masker.bytes(calls))
    document: dict[str, JsonValue] = {
        "schema_version": SCHEMA_VERSION,
        "assertions": [dict(asdict(record)) for record in assertions],
        "notes": list(notes),
        "result": dump_result(result),
    }
    write_json(folder / "result.json", document, masker)
