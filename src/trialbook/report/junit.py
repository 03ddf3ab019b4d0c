r"""JUnit XML from a suite report, for CI systems that display it (pure).

The file is always well-formed XML 1.0, whatever the agents printed: characters XML 1.0 forbids (control
characters other than tab, newline and carriage return, such as the ESC of coloured output or a NUL, and
U+FFFE/U+FFFF) are written as the text ``\xNN`` or ``\uNNNN``. Text is masked after that replacement and
before it is escaped, so neither the replacement nor the escaping can bring a secret back.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable

from ..evidence import SuiteReport, TestReport

__all__ = ["render_junit", "xml_safe"]

_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")

_PROPERTIES = (
    "agent_version",
    "model",
    "cost_usd",
    "verdict",
    "cached_verdict",
    "cached_started_at",
    "cached_commit",
    "arm",
    "passed",
    "trials",
    "pass_rate",
    "pass_rate_ci95_low",
    "pass_rate_ci95_high",
    "saved_trials",
    "vacuous_held",
)
"""Properties copied onto each test case; unknown values (``None``) are left out rather than written."""


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def xml_safe(text: str) -> str:
    r"""``text`` with every character XML 1.0 forbids written as ``\xNN`` (``\uNNNN`` above U+00FF)."""
    return _FORBIDDEN.sub(_visible, text)


def _identity(text: str) -> str:
    return text


def _cached_failure(test: TestReport) -> bool:
    return test.outcome == "cached" and test.properties.get("cached_verdict") in ("fail", "error")


def render_junit(suite: SuiteReport, mask: Callable[[str], str] = _identity) -> str:
    """One ``testcase`` per eval × agent; failures carry the assertion messages, errors the agent error.

    Cached pairs are reported as passing (or failing, with the reasons their history line kept) test cases
    with ``cached_*`` properties, skipped ones as skipped, so the counts in a CI dashboard match trialbook's
    own summary: ``failures`` counts every ``<failure>`` element, cached ones included. ``mask`` is applied
    to every text and attribute value (never to the markup) after forbidden characters are replaced.
    """

    def clean(text: str) -> str:
        return mask(xml_safe(text))

    counts = suite.outcome_counts
    # A cached failure is a <failure> below, so it counts as one: the attribute agrees with the elements.
    # A compared eval's without arm is a measurement: its case never counts as a failure (see below).
    unjudged = Counter(t.outcome for t in suite.tests if t.properties.get("arm") == "without")
    cached_failed = sum(
        1 for test in suite.tests if _cached_failure(test) and test.properties.get("arm") != "without"
    )
    root = ET.Element(
        "testsuite",
        {
            "name": "trialbook",
            "tests": str(len(suite.tests)),
            "failures": str(counts["failed"] - unjudged["failed"] + cached_failed),
            "errors": str(sum(counts[o] - unjudged[o] for o in ("error", "incomplete"))),
            "skipped": str(counts["skipped"]),
            "time": f"{suite.metadata.duration_s or 0.0:.3f}",
            "timestamp": suite.metadata.started_at,
        },
    )
    for test in suite.tests:
        eval_id, _, agent = test.id.partition("::")
        case = ET.SubElement(
            root,
            "testcase",
            {
                "classname": clean(agent or "trialbook"),
                "name": clean(eval_id),
                "time": f"{test.duration_s or 0.0:.3f}",
            },
        )
        message = clean("\n".join(test.assertion_errors))
        first = clean(test.assertion_errors[0]) if test.assertion_errors else ""
        if test.properties.get("arm") == "without":
            out = ET.SubElement(case, "system-out")
            out.text = clean(f"without arm of a compared eval, not judged: {test.properties.get('verdict')}")
        elif test.outcome == "failed" or _cached_failure(test):
            node = ET.SubElement(case, "failure", {"message": first or "failed"})
            node.text = message
        elif test.outcome in ("error", "incomplete"):
            node = ET.SubElement(
                case,
                "error",
                {"message": f"{test.outcome}: {first}".strip()},
            )
            node.text = message
        elif test.outcome == "skipped":
            ET.SubElement(case, "skipped", {"message": clean(str(test.properties.get("reason", "")))})
        props = ET.SubElement(case, "properties")
        for key in _PROPERTIES:
            value = test.properties.get(key)
            if value is not None:  # unknown stays unknown: no value="None"
                ET.SubElement(props, "property", {"name": key, "value": clean(str(value))})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
