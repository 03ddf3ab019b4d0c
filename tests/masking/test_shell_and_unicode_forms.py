"""Secrets as bash writes them back, in other Unicode normal forms and in Latin-1 bytes, are masked.

The shell forms are checked against the real bash: its ``set -x`` trace and ``printf %q`` of random
secrets holding quotes, spaces and ``$`` must come out of the masker as ``***`` whole.
"""

from __future__ import annotations

import subprocess
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from trialbook.masking import Masker

_SECRETS = st.text(alphabet=st.sampled_from("abcXYZ019-_'\" $\\`!*é&;#~=,"), min_size=8, max_size=24).filter(
    lambda s: s.strip() == s and any(c.isalnum() for c in s)
)


def _bash(secret: str) -> list[str]:
    done = subprocess.run(
        ["bash", "-xc", 'true "$0"; printf "%q\\n" "$0"', secret],
        capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )  # fmt: skip
    return [*done.stderr.splitlines(), *done.stdout.splitlines()]


@settings(max_examples=60, deadline=None)
@given(_SECRETS)
def test_set_x_and_printf_q_of_a_secret_are_masked_whole(secret: str) -> None:
    masker = Masker([secret])
    trace, quoted = _bash(secret)[0], _bash(secret)[-1]
    assert masker.text(trace) == "+ true ***", (secret, trace)
    assert masker.text(quoted) == "***", (secret, quoted)


def test_the_reported_shell_forms_are_masked() -> None:
    secret = "zQ9-é'x y$Lkey7"
    masker = Masker([secret])
    for written in ("zQ9-é\\'x\\ y\\$Lkey7", "'zQ9-é'\\''x y$Lkey7'", '"zQ9-é\'x y\\$Lkey7"'):
        assert masker.text(f"key: {written}.") == "key: ***.", written


@given(st.text(alphabet=st.sampled_from("aéÅﬁ½ñ01Zx"), min_size=6, max_size=16))
def test_every_unicode_normal_form_of_a_secret_is_masked(secret: str) -> None:
    masker = Masker([secret])
    for kind in ("NFC", "NFD", "NFKC", "NFKD"):
        written = unicodedata.normalize(kind, secret)
        assert masker.text(f"<{written}>") == "<***>", (kind, secret)


def test_latin1_bytes_of_a_secret_are_masked_where_it_encodes_there() -> None:
    secret = "pässwörd-Lkey7"
    masker = Masker([secret])
    assert masker.bytes(b"token=" + secret.encode("latin-1") + b";") == b"token=***;"
    # Read back as text (not UTF-8: surrogate escapes), it is masked too.
    shown = (b"token=" + secret.encode("latin-1")).decode("utf-8", errors="surrogateescape")
    assert masker.text(shown) == "token=***"
