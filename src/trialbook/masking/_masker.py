"""The masker: every form of every secret value becomes ``***``, in text, bytes and JSON values (pure)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..evidence import JsonValue
from ._forms import MIN_FORM_LENGTH, secret_forms, utf8

__all__ = ["MASK", "Masker"]

MASK = "***"


class Masker:
    """Replaces each form (see :func:`~trialbook.masking.secret_forms`) of the secrets it was given.

    At each position the longest form wins, so a secret that contains another is masked whole, and masking
    repeats until no form is left: text such as ``ab`` + ``***`` + ``cd`` cannot put a secret back together.
    Every form is longer than ``***``, so that ends. Values shorter than four characters are ignored; the
    runner refuses to run with such a secret rather than mask ordinary text.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self._values: set[str] = set()
        self._forms: list[str] = []
        self._text: re.Pattern[str] | None = None
        self._bytes: re.Pattern[bytes] | None = None
        self.add(secrets)

    def add(self, secrets: Iterable[str]) -> None:
        """Mask these values too (another eval's secrets, a provider key, the GitHub token)."""
        new = {value for value in secrets if len(value) >= MIN_FORM_LENGTH} - self._values
        if not new:
            return
        self._values |= new
        forms = set(self._forms)
        for value in new:
            forms |= secret_forms(value)
        self._forms = sorted(forms, key=lambda form: (-len(form), form))
        self._text = re.compile("|".join(re.escape(form) for form in self._forms))
        self._bytes = re.compile(b"|".join(re.escape(utf8(form)) for form in self._forms))

    @property
    def byte_pattern(self) -> re.Pattern[bytes] | None:
        """Every form as bytes, longest first (``None`` without secrets): what a stream masker matches."""
        return self._bytes

    def extended(self, secrets: Iterable[str]) -> Masker:
        """A new masker for this one's secrets and ``secrets`` (an adapter's own credentials)."""
        return Masker((*self._values, *secrets))

    @property
    def active(self) -> bool:
        """Whether there is anything to mask."""
        return bool(self._forms)

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values themselves, longest first (to register with GitHub Actions; never print)."""
        return tuple(sorted(self._values, key=lambda value: (-len(value), value)))

    @property
    def forms(self) -> tuple[str, ...]:
        """Every masked form, longest first (for tests and scans; never print these)."""
        return tuple(self._forms)

    def text(self, value: str) -> str:
        """``value`` with every form of every secret replaced by ``***``."""
        pattern = self._text
        # A plain substring test per form is far cheaper than the regex on text that holds no secret.
        if pattern is None or not any(form in value for form in self._forms):
            return value
        while pattern.search(value):
            value = pattern.sub(MASK, value)
        return value

    def bytes(self, value: bytes) -> bytes:
        """Like :meth:`text`, for output of unknown encoding (the UTF-8 bytes of each form)."""
        pattern = self._bytes
        if pattern is None:
            return value
        while pattern.search(value):
            value = pattern.sub(MASK.encode(), value)
        return value

    def json(self, value: JsonValue) -> JsonValue:
        """A copy of a JSON value with every string value masked; keys are structure and stay as they are."""
        if self._text is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {key: self.json(item) for key, item in value.items()}
        return value

    def json_line(self, line: str) -> str:
        """One line of JSON text with its string values masked and its structure kept.

        Masking the text itself could cut a JSON string short (a secret ending in ``"``). A line with
        nothing to mask is returned unchanged, byte for byte; one that is not JSON is masked as text.
        """
        if self._text is None:
            return line
        try:
            value = json.loads(line)
        except ValueError:
            return self.text(line)
        masked = self.json(value)
        # Decoded first: a value escaped in a way no listed form covers (``\u0008``) is still found.
        return line if masked == value else json.dumps(masked, ensure_ascii=False, separators=(",", ":"))
