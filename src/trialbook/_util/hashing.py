"""Canonical JSON and tagged hashes: one byte form per value, so equal inputs always hash equal.

Cache keys and prompt hashes are compared across machines and trialbook versions; a hash that depended on
dict order or on the platform's default encoding would re-run everything for no reason.
"""

from __future__ import annotations

import hashlib
import json

__all__ = ["HASH_PREFIX", "canonical_json", "tagged_sha256"]

HASH_PREFIX = "sha256:"
"""Every hash trialbook writes names its algorithm, so a later change of algorithm is visible, not silent."""


def canonical_json(obj: object) -> bytes:
    """The one UTF-8 byte form of a JSON-able value: sorted keys, no spaces, non-ASCII kept as is.

    Raises:
        TypeError: ``obj`` holds something JSON cannot represent; hashing it by ``repr`` would be unstable.
        ValueError: ``obj`` holds NaN or an infinity, which has no JSON form.
    """
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return text.encode("utf-8")


def tagged_sha256(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()
