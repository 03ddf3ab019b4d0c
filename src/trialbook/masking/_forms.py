"""The forms a secret value can take in captured text, each of which is masked (pure).

A tool prints a token raw, but a program that writes JSON escapes it, an HTML report escapes it again, a
URL percent-encodes it and an ``Authorization: Basic`` header carries it in base64. Masking only the raw
value, as GitHub Actions does, would leave every one of those readable. This module lists them; the exact
list is documented in docs/eval-files.md and the two must change together.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterator
from urllib.parse import quote, quote_plus

__all__ = ["MIN_FORM_LENGTH", "bases", "secret_forms", "utf8"]

MIN_FORM_LENGTH = 4
"""Shorter forms are never masked alone: ``***`` for every ``ab`` would destroy ordinary text."""

_HEX_ESCAPE = r"%[0-9A-F]{2}"  # compiled (and cached by ``re``) for the first secret


def utf8(text: str) -> bytes:
    """The bytes ``text`` stands for; a value read from a non-UTF-8 environment keeps its raw bytes."""
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass")


def bases(value: str) -> Iterator[str]:
    """The value itself, the value stripped of surrounding whitespace, and each of its lines.

    A multi-line secret (a PEM key) is often printed or logged one line at a time, and ``echo $X`` without
    quotes strips the whitespace around it. Pieces shorter than :data:`MIN_FORM_LENGTH` are left out.
    """
    for piece in (value, value.strip(), *value.splitlines(), *(line.strip() for line in value.splitlines())):
        if len(piece) >= MIN_FORM_LENGTH:
            yield piece


def _xml_forms(text: str) -> Iterator[str]:
    body = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    yield body  # element text
    quoted = body.replace('"', "&quot;")
    yield quoted
    yield quoted.replace("\n", "&#10;").replace("\r", "&#13;").replace("\t", "&#09;")  # attribute values
    yield quoted.replace("'", "&#x27;")  # Python's html.escape
    yield quoted.replace("'", "&apos;")
    yield quoted.replace("'", "&#39;")  # Jinja, markupsafe


def _percent_forms(raw: bytes) -> Iterator[str]:
    # From the bytes: the same text as from a UTF-8 string, and a value from an environment that is not
    # UTF-8 (its bytes kept as surrogates) is encoded as a URL would carry it, where the string refused.
    for encoded in (quote(raw, safe=""), quote(raw), quote_plus(raw, safe="")):
        yield encoded
        yield re.sub(_HEX_ESCAPE, lambda m: m.group(0).lower(), encoded)


def _base64_forms(raw: bytes) -> Iterator[str]:
    encoders: tuple[Callable[[bytes], bytes], ...] = (base64.b64encode, base64.urlsafe_b64encode)
    for encode in encoders:
        yield encode(raw).decode("ascii")  # the value alone, padding included
        for offset in range(3):
            # Inside a longer blob the value starts at byte ``offset`` of a 3-byte group; keep only the
            # characters that depend on the value's own bits, not on the bytes around it.
            encoded = encode(b"\0" * offset + raw).decode("ascii")
            start = -(-8 * offset // 6)
            end = 8 * (offset + len(raw)) // 6
            yield encoded[start:end]


def secret_forms(value: str) -> set[str]:
    r"""Every form of ``value`` that is masked, each at least :data:`MIN_FORM_LENGTH` characters long.

    For the value, its stripped form and each of its lines: the raw text; JSON string escaping (with and
    without ``\u`` escapes for non-ASCII); XML/HTML escaping of text and attributes (``&quot;``,
    ``&apos;``, ``&#39;``, ``&#x27;``, ``&#10;``); percent-encoding (path and query style, upper- and
    lower-case hex); base64 standard and URL-safe, alone and at each of the three byte alignments inside
    a longer blob; hex in lower and upper case.
    """
    forms: set[str] = set()
    for text in set(bases(value)):
        raw = utf8(text)
        forms.add(text)
        forms.add(json.dumps(text, ensure_ascii=False)[1:-1])
        forms.add(json.dumps(text)[1:-1])
        forms.update(_xml_forms(text))
        forms.update(_percent_forms(raw))
        forms.update(_base64_forms(raw))
        forms.add(raw.hex())
        forms.add(raw.hex().upper())
    return {form for form in forms if len(form) >= MIN_FORM_LENGTH}
