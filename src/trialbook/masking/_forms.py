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
import unicodedata
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


_PRINTF_Q = frozenset(" !\"$&'()*,;<>?[\\]^`{|}")
"""What bash's ``printf %q`` writes with a backslash before it anywhere (``~`` and ``#``: see _printf_q)."""


def _printf_q(text: str, index: int) -> str:
    """One character as ``printf %q`` writes it: ``#`` escaped first, ``~`` first or after ``=``/``:``."""
    ch = text[index]
    before = text[index - 1] if index else ""
    if ch in _PRINTF_Q or (ch == "#" and not index) or (ch == "~" and before in ("", "=", ":")):
        return "\\" + ch
    return ch


def _shell_forms(text: str) -> Iterator[str]:
    """How bash writes ``text`` back: ``set -x`` traces, ``printf %q`` and double-quoted strings."""
    yield "'" + text.replace("'", "'\\''") + "'"  # set -x: '...' with each ' as '\''
    if not any(ch < " " or ch == "\x7f" for ch in text):  # control characters go to $'...' instead
        yield "".join(_printf_q(text, index) for index in range(len(text)))
    doubled = re.sub(r'([\\"$`])', r"\\\1", text)
    yield doubled
    yield f'"{doubled}"'


def _encodings(text: str) -> Iterator[tuple[bytes, str]]:
    """The bytes ``text`` may be written as, each with the string that stands for them when read back.

    UTF-8, and Latin-1 where the text has a character it encodes differently: a program in a Latin-1
    locale writes those bytes, which read back (undecodable as UTF-8) as surrogate escapes.
    """
    raw = utf8(text)
    yield raw, text
    try:
        latin = text.encode("latin-1")
    except UnicodeEncodeError:
        return
    if latin != raw:
        yield latin, latin.decode("utf-8", errors="surrogateescape")


def secret_forms(value: str) -> set[str]:
    r"""Every form of ``value`` that is masked, each at least :data:`MIN_FORM_LENGTH` characters long.

    For the value, its stripped form and each of its lines: the raw text; JSON string escaping (with and
    without ``\u`` escapes for non-ASCII); XML/HTML escaping of text and attributes (``&quot;``,
    ``&apos;``, ``&#39;``, ``&#x27;``, ``&#10;``); percent-encoding (path and query style, upper- and
    lower-case hex); base64 standard and URL-safe, alone and at each of the three byte alignments inside
    a longer blob; hex in lower and upper case; bash's ``set -x``, ``printf %q`` and double-quote
    escaping. Each of the value's Unicode normal forms (NFC, NFD, NFKC, NFKD) gets all of them, and so
    do its Latin-1 bytes where it encodes there differently from UTF-8.
    """
    forms: set[str] = set()
    texts = {
        unicodedata.normalize(kind, piece)
        for piece in bases(value)
        for kind in ("NFC", "NFD", "NFKC", "NFKD")
    }
    for text in texts | set(bases(value)):
        forms.add(json.dumps(text, ensure_ascii=False)[1:-1])
        forms.add(json.dumps(text)[1:-1])
        forms.update(_xml_forms(text))
        forms.update(_shell_forms(text))
        for raw, shown in _encodings(text):
            forms.add(shown)
            forms.update(_percent_forms(raw))
            forms.update(_base64_forms(raw))
            forms.add(raw.hex())
            forms.add(raw.hex().upper())
    return {form for form in forms if len(form) >= MIN_FORM_LENGTH}
