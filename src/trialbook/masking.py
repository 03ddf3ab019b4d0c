"""Secret masking: every declared secret value becomes ``***`` wherever trialbook writes or prints.

Masking happens on text and on JSON values before they are serialized, so a secret that JSON would escape
(quotes, backslashes, non-ASCII) is still found.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from .evidence import JsonValue

__all__ = ["MASK", "Masker"]

MASK = "***"

T = TypeVar("T", bound=JsonValue)


class Masker:
    """Replaces secret values in text, bytes and JSON values.

    Longer secrets are replaced first so a secret that contains another is masked whole. Empty values are
    ignored: masking "" would corrupt every string.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._secrets: list[str] = []
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Mask these values too (e.g. secrets of another eval in the same run)."""
        merged = set(self._secrets)
        for value in secrets:
            if value:
                merged.add(value)
                # A value printed with a trailing newline stripped, or line by line, must not leak either.
                merged.update(line for line in value.splitlines() if len(line) >= 4)
        self._secrets = sorted(merged, key=len, reverse=True)

    @property
    def active(self) -> bool:
        """Whether there is anything to mask."""
        return bool(self._secrets)

    def text(self, value: str) -> str:
        """``value`` with every secret replaced by ``***``."""
        for secret in self._secrets:
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def bytes(self, value: bytes) -> bytes:
        """Like :meth:`text`, for raw output of unknown encoding (the UTF-8 form of each secret)."""
        for secret in self._secrets:
            raw = secret.encode("utf-8")
            if raw in value:
                value = value.replace(raw, MASK.encode())
        return value

    def json(self, value: JsonValue) -> JsonValue:
        """A copy of a JSON value with every string (keys included) masked."""
        if not self._secrets:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(key): self.json(item) for key, item in value.items()}
        return value
