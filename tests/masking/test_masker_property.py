"""Masking attacked with random secrets and random text: no listed form survives, every file still parses.

The forms are computed here independently of trialbook's own list, from the standard library encoders,
so a form dropped from the implementation fails this test rather than silently going unmasked.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from trialbook.evidence import (
    AgentResult,
    AssertionRecord,
    ExecutionRecord,
    SuiteMetadata,
    SuiteReport,
    TestReport,
    ToolCall,
    Turn,
    load_suite,
    save_suite,
)
from trialbook.history import HistoryLine
from trialbook.masking import MASK, Masker, length_problem, length_warning, masked_record, masked_result
from trialbook.report.junit import render_junit

# Every Unicode scalar value; lone surrogates are not text any file or environment variable can hold.
CHARACTERS = st.characters(exclude_categories=["Cs"])
HOSTILE = "\"'\\\n\r\t<>&%+/=:;,{}[] \x00\x1b\x7f\u2028é中🔑"
secrets = st.text(alphabet=st.one_of(CHARACTERS, st.sampled_from(HOSTILE)), min_size=1, max_size=64)
surroundings = st.text(alphabet=st.one_of(CHARACTERS, st.sampled_from(HOSTILE)), max_size=40)


def _xml(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


ENCODINGS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "json": lambda s: json.dumps(s)[1:-1],
    "json-utf8": lambda s: json.dumps(s, ensure_ascii=False)[1:-1],
    "xml-text": _xml,
    "xml-attr": lambda s: _xml(s).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#09;"),
    "html": lambda s: html.escape(s, quote=True),
    "xml-apos": lambda s: _xml(s).replace('"', "&quot;").replace("'", "&apos;"),
    "percent": lambda s: quote(s, safe=""),
    "percent-path": quote,
    "percent-plus": lambda s: quote_plus(s, safe=""),
    "percent-lower": lambda s: re.sub("%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(s, safe="")),
    "base64": lambda s: base64.b64encode(s.encode()).decode(),
    "base64url": lambda s: base64.urlsafe_b64encode(s.encode()).decode(),
    "hex": lambda s: s.encode().hex(),
    "HEX": lambda s: s.encode().hex().upper(),
}


def _pieces(secret: str) -> list[str]:
    """The value, the value stripped, and each line of it long enough to mask alone."""
    return [secret, secret.strip(), *(line for line in secret.splitlines() if len(line) >= 4)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(secret=secrets, before=surroundings, after=surroundings, encoding=st.sampled_from(sorted(ENCODINGS)))
def test_no_listed_form_survives_masking(secret: str, before: str, after: str, encoding: str) -> None:
    masker = Masker([secret])
    if len(secret.strip()) < 4:
        # Part of the model: a value this short (around its whitespace) is refused before the run.
        assert length_problem("S", secret) is not None
        if len(secret) < 4:
            assert not masker.active
        return
    assert length_problem("S", secret) is None
    for piece in _pieces(secret):
        form = ENCODINGS[encoding](piece)
        masked = masker.text(before + form + after)
        assert form not in masked
        assert form.encode() not in masker.bytes((before + form + after).encode())


@settings(max_examples=200, deadline=None)
@given(middle=st.binary(max_size=30), bad=st.sampled_from([b"\xff", b"\xfe", b"\xc3", b"\x80"]))
def test_a_secret_from_an_environment_that_is_not_utf8_is_masked_in_each_form(
    middle: bytes, bad: bytes
) -> None:
    """``os.environ`` keeps bytes that are not UTF-8 as lone surrogates: such a value is still a secret."""
    raw = b"key-" + middle + bad + b"-end"
    secret = os.fsdecode(raw)
    assume(length_problem("S", secret) is None)
    masker = Masker([secret])  # builds every form, as it does for any other value
    assert secret not in masker.text(f"<{secret}>")
    assert raw not in masker.bytes(b"<" + raw + b">")
    for form in (quote(raw, safe=""), quote_plus(raw, safe=""), base64.b64encode(raw).decode(), raw.hex()):
        assert form not in masker.text(f"<{form}>"), form


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    secret=secrets.filter(lambda s: len(s) >= 4),
    before=st.binary(max_size=20),
    after=st.binary(max_size=20),
    urlsafe=st.booleans(),
)
def test_base64_inside_a_longer_blob_is_masked_at_every_alignment(
    secret: str, before: bytes, after: bytes, urlsafe: bool
) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    raw = secret.encode()
    blob = encode(before + raw + after).decode()
    # The characters that carry only the secret's bits, wherever in a 3-byte group it starts.
    start = -(-8 * len(before) // 6)
    end = 8 * (len(before) + len(raw)) // 6
    core = blob[start:end]
    assume(len(core) >= 4)
    assert core not in Masker([secret]).text(f"Authorization: Basic {blob}")


def _suite(result: AgentResult, record: AssertionRecord, failure: str) -> SuiteReport:
    execution = ExecutionRecord(result=result, trial=1, passed=False, assertions=(record,))
    test = TestReport(
        id="deploy::literal",
        outcome="failed",
        duration_s=1.0,
        assertion_errors=(failure,),
        properties={"verdict": "fail", "agent_version": "1.0"},
        executions=(execution,),
    )
    metadata = SuiteMetadata(
        producer="trialbook eval", trialbook_version="0", started_at="2026-12-01T00:00:00Z"
    )
    return SuiteReport(metadata=metadata, tests=(test,))


@settings(
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)
@given(secret=secrets, text=surroundings, encoding=st.sampled_from(sorted(ENCODINGS)))
def test_masked_suite_junit_and_history_line_still_parse(
    secret: str, text: str, encoding: str, tmp_path: Path
) -> None:
    masker = Masker([secret])
    captured = text + ENCODINGS[encoding](secret) + text
    result = AgentResult(
        agent_name="literal",
        agent_version="1.0",
        success=False,
        error=captured,
        stop_reason="execution_error",
        turns=(Turn("assistant", captured),),
        all_tool_calls=(
            ToolCall(
                call_id="step-1", name="bash", arguments={"command": captured, captured: captured},
                completion_received=True, success=False, result=captured, error=captured,
            ),
        ),
        capture_errors=(captured,),
    )  # fmt: skip
    record = AssertionRecord(
        kind="succeeds", label=captured, passed=False, expected="exit 0", actual=captured
    )
    masked = masked_result(result, masker)
    suite = _suite(masked, masked_record(record, masker), masker.text(f"trial 1: {captured}"[:300]))
    path = tmp_path / "suite.json"
    save_suite(suite, path)
    loaded = load_suite(path)
    assert loaded.tests[0].outcome == "failed"
    assert loaded.tests[0].executions[0].result.stop_reason == "execution_error"
    ET.fromstring(render_junit(loaded, masker.text).encode("utf-8"))
    line = HistoryLine(
        id="deploy", agent="literal", agent_version=None, model=None, prompt_sha256="0" * 64,
        cache_key="sha256:" + "1" * 64, trials=1, passed=0, pass_rate=0.0, threshold=1.0, verdict="fail",
        cost_usd=None, duration_s=None, started_at="2026-12-01T00:00:00Z", commit=None,
        trialbook_version="0", ci_run=None, extra={"note": masker.text(captured)},
    )  # fmt: skip
    assert HistoryLine.from_json(json.loads(line.to_json_line()), "line").extra == line.extra
    if masker.active:
        written = path.read_text(encoding="utf-8")
        assert secret not in json.loads(written)["tests"][0]["assertion_errors"][0]
        assert MASK in masked.error if masked.error else True


@pytest.mark.parametrize("value", ["test", "tests", "pass", "time"])
def test_keys_and_vocabulary_are_never_masked(value: str) -> None:
    masker = Masker([value])
    masked_json = masker.json({"tests": ["tests"], "passed": ["passed"]})
    assert isinstance(masked_json, dict)
    assert list(masked_json) == ["tests", "passed"]
    assert (MASK in str(masked_json)) == (value in "tests passed")
    result = AgentResult(
        agent_name="literal", agent_version=None, success=True, error=None, stop_reason="timeout",
        turns=(Turn("assistant", "tests passed in time"),),
    )  # fmt: skip
    masked = masked_result(result, masker)
    assert masked.stop_reason == "timeout" and masked.turns[0].role == "assistant"
    assert masked.turns[0].content is not None and value not in masked.turns[0].content


@pytest.mark.parametrize(
    ("value", "problem", "warned"),
    [
        ("abc\n", True, False),
        ("   ", True, False),
        (" abcd ", False, True),
        ("abcdefg\n", False, True),
        ("abcdefgh\n", False, False),
        ("", False, False),
    ],
)
def test_a_value_is_measured_without_the_whitespace_around_it(
    value: str, problem: bool, warned: bool
) -> None:
    assert (length_problem("S", value) is not None) is problem
    assert (length_warning("S", value) is not None) is warned
