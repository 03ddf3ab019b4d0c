"""Evidence files on disk: published atomically, read back strictly.

A reader of ``suite.json`` (a person, the job summary, the history writer) must see either the previous
complete file or the new complete file. A crash, a full disk or an unserializable value half-way through
must never leave a truncated file that looks like a finished run, so every save goes through
:func:`trialbook._util.fsutil.atomic_write_bytes`: a temporary file in the same folder, fsynced, and only then
renamed over the target.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .._util.fsutil import NotDurableError, atomic_write_bytes
from ._codec import suite_from_json, suite_to_json
from ._errors import EvidenceError, EvidenceSchemaError, EvidenceWriteError
from ._json import JsonObject
from ._report import SuiteReport

__all__ = ["load_suite", "publish_json", "read_json", "save_suite"]

StrPath = str | os.PathLike[str]


def publish_json(path: StrPath, data: JsonObject) -> None:
    """Write ``data`` as UTF-8 JSON to ``path`` with trialbook's one durable write.

    That is :func:`trialbook._util.fsutil.atomic_write_bytes` (temp file, fsync, rename); this adds the
    serialization and turns its failures into :class:`EvidenceWriteError`. The folder must exist.

    Raises:
        EvidenceWriteError: the file could not be written or ``data`` is not JSON; whatever was at
            ``path`` before is unchanged and no temporary file is left behind.
    """
    target = Path(path)
    try:
        text = json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
        encoded = text.encode("utf-8")  # a lone surrogate (an undecodable name) is not UTF-8
    except (ValueError, TypeError) as exc:
        raise EvidenceWriteError(
            f"could not save {target}: {exc}; the previous file there, if any, is unchanged"
        ) from exc
    try:
        atomic_write_bytes(target, encoded, make_parents=False)
    except NotDurableError as exc:
        raise EvidenceWriteError(f"saved {target}, but {exc.strerror}") from exc
    except OSError as exc:
        raise EvidenceWriteError(
            f"could not save {target}: {exc.strerror or exc}; the previous file there, if any, is unchanged"
        ) from exc


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def read_json(path: StrPath) -> Any:
    """Parse a JSON file strictly: no ``NaN``/``Infinity`` and no key repeated in one object.

    Raises:
        EvidenceSchemaError: the file is not strict JSON (the message names the file and the line).
        EvidenceError: the file could not be read at all.
    """
    file = os.fspath(path)
    try:
        text = Path(file).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise EvidenceSchemaError("", f"not UTF-8 text ({exc.reason})", file=file) from None
    except OSError as exc:
        raise EvidenceError(f"could not read {file}: {exc.strerror or exc}") from exc
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno}, column {exc.colno}"
        raise EvidenceSchemaError("", f"not valid JSON at {where}: {exc.msg}", file=file) from None
    except ValueError as exc:
        raise EvidenceSchemaError("", f"not strict JSON: {exc}", file=file) from None


def save_suite(report: SuiteReport, path: StrPath) -> None:
    """Save a suite report as schema-4.0 JSON, atomically.

    Raises:
        EvidenceSchemaError: the report does not fit schema 4.0 (nothing is written).
        EvidenceWriteError: the file could not be published (the previous one is unchanged).
    """
    try:
        data = suite_to_json(report)
    except EvidenceSchemaError as exc:
        raise exc.in_file(os.fspath(path)) from None
    publish_json(path, data)


def load_suite(path: StrPath) -> SuiteReport:
    """Load a schema-4.0 suite file, rejecting any other version and any incomplete record.

    Raises:
        EvidenceSchemaError: names the file, the JSON location and what is wrong there.
    """
    data = read_json(path)
    try:
        return suite_from_json(data)
    except EvidenceSchemaError as exc:
        raise exc.in_file(os.fspath(path)) from None
