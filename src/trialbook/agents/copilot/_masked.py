"""Known credentials masked out of a whole result tree before anything is saved or returned.

The provider's API key (and the GitHub token the CLI was given) can come back in any text the session
produced: a model that repeats it, a tool that prints it, a raw event that echoes the request. Masking the
finished record, every string at every depth, means the evidence file, ``result.json`` and a test's own
assertions all see ``***``; images (bytes) are left whole, since replacing bytes would corrupt them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from ...masking import Masker

__all__ = ["mask_record"]

T = TypeVar("T")


def _mask(value: Any, masker: Masker) -> Any:
    if isinstance(value, str):
        return masker.text(value)
    if isinstance(value, tuple):
        return tuple(_mask(item, masker) for item in value)
    if isinstance(value, list):
        return [_mask(item, masker) for item in value]
    if isinstance(value, dict):
        return {_mask(key, masker): _mask(item, masker) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: _mask(getattr(value, f.name), masker) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value


def mask_record(record: T, masker: Masker) -> T:
    """A copy of ``record`` (a dataclass tree) with every string masked; ``record`` when nothing is known."""
    masked: T = record if not masker.active else _mask(record, masker)
    return masked
