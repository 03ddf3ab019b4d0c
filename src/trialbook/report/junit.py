"""JUnit XML from a suite report, for CI systems that display it (pure)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from ..evidence import SuiteReport

__all__ = ["render_junit"]

_PROPERTIES = (
    "agent_version",
    "model",
    "cost_usd",
    "verdict",
    "cached_verdict",
    "passed",
    "trials",
    "pass_rate",
    "pass_rate_ci95_low",
    "pass_rate_ci95_high",
    "saved_trials",
    "vacuous_held",
)
"""Properties copied onto each test case; unknown values (``None``) are left out rather than written."""


def render_junit(suite: SuiteReport) -> str:
    """One ``testcase`` per eval × agent; failures carry the assertion messages, errors the agent error.

    Cached pairs are reported as passing (or failing) test cases with a ``cached`` property, skipped ones as
    skipped, so the counts in a CI dashboard match trialbook's own summary.
    """
    counts = suite.outcome_counts
    root = ET.Element(
        "testsuite",
        {
            "name": "trialbook",
            "tests": str(len(suite.tests)),
            "failures": str(counts["failed"]),
            "errors": str(counts["error"] + counts["incomplete"]),
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
            {"classname": agent or "trialbook", "name": eval_id, "time": f"{test.duration_s or 0.0:.3f}"},
        )
        message = "\n".join(test.assertion_errors)
        first = test.assertion_errors[0] if test.assertion_errors else ""
        if test.outcome == "failed" or (
            test.outcome == "cached" and test.properties.get("cached_verdict") == "fail"
        ):
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
            ET.SubElement(case, "skipped", {"message": str(test.properties.get("reason", ""))})
        props = ET.SubElement(case, "properties")
        for key in _PROPERTIES:
            value = test.properties.get(key)
            if value is not None:  # unknown stays unknown: no value="None"
                ET.SubElement(props, "property", {"name": key, "value": str(value)})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
