"""Markdown for reviewers: the job summary and the sticky PR comment (pure string building).

Both show the same content so a reviewer who opens either sees the same verdicts. Rows that need a look
(regressions, then anything that did not pass) come first. Values a reader could mistake are spelled out:
an unknown cost is ``unknown``, never ``$0.00``; an eval with no history is ``new``, not ``0/0``.
Secrets are masked by the caller before any text reaches these functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..scoring.comparison import COMPARISON_TEST_NAME, ComparedPair
from ..scoring.stats import REGRESSION_TEST_NAME, format_rate
from ._rows import BaseResult, ListedEval, ReviewRow
from .isolation import isolation_text
from .terminal import format_usd
from .triggers import markdown_lines
from .versions import markdown_lines as version_lines

__all__ = [
    "COMMENT_LIMIT",
    "STICKY_MARKER",
    "BaseResult",
    "ListedEval",
    "ReviewRow",
    "render_pr_comment",
    "render_summary",
    "sticky_marker",
]

STICKY_MARKER = "<!-- trialbook:sticky -->"
"""Hidden first line of the PR comment; the comment client finds the comment to update by it."""

_HEADER = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._-]{0,63}")


def sticky_marker(header: str | None = None) -> str:
    """The hidden marker of the comment named ``header`` (``--comment-header``); the default without one.

    Two workflows that post with different headers keep two comments: neither marker contains the other.

    Raises:
        ValueError: a header that is not 1 to 64 letters, digits, spaces, ``.``, ``_`` or ``-``
            (starting with a letter or digit), so it can never end the HTML comment or break the heading.
    """
    if header is None:
        return STICKY_MARKER
    if not _HEADER.fullmatch(header) or header != header.strip():
        raise ValueError(
            f"comment header {header!r}: use 1 to 64 letters, digits, spaces, '.', '_' or '-', starting "
            "with a letter or digit, e.g. nightly-evals"
        )
    return f"<!-- trialbook:sticky:{header} -->"


COMMENT_LIMIT = 65_000
"""GitHub rejects issue comments over 65,536 characters; stay a little below."""

_VERDICTS = {
    "pass": "✅ pass",
    "fail": "❌ fail",
    "error": "⚠️ error",
    "incomplete": "⏸️ incomplete",
    "vacuous": "🕳️ vacuous",
    "judge_uncalibrated": "⚖️ judge uncalibrated",
}
_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "|": "\\|",
        "*": "\\*",
        "_": "\\_",
        "`": "\\`",
        "[": "\\[",
        "]": "\\]",
        "~": "\\~",
        "<": "&lt;",
        ">": "&gt;",
        "\r": " ",
        "\n": " ",
    }
)


def _text(value: str) -> str:
    """Escape text so it renders literally inside a table cell or list item."""
    return value.translate(_ESCAPES)


def _verdict(verdict: str) -> str:
    return _VERDICTS.get(verdict, _text(verdict))


def _cost(value: float | None) -> str:
    return "unknown" if value is None else format_usd(value)


def format_duration(seconds: float | None) -> str:
    """``4.2s``, ``42s``, ``3m 05s``, ``1h 02m``; ``unknown`` for ``None``."""
    if seconds is None:
        return "unknown"
    whole = round(seconds)
    if whole < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


_duration = format_duration


def _base(base: BaseResult | None) -> str:
    if base is None:
        return "new"
    commit = f" @ {_text(base.commit[:7])}" if base.commit else ""
    return f"{base.passed}/{base.trials} {_text(base.verdict)}{commit}"


def _base_cell(row: ReviewRow) -> str:
    history = row.history
    if history is not None and row.compared_with_window:
        return f"flaky: {format_rate(history.passed, history.trials)} over {history.runs} runs"
    return _base(row.base)


def _regression(row: ReviewRow) -> str:
    test = row.regression
    if test is None:
        return "–"
    if row.within_usual_range:
        return f"no, within the usual range (p={test.p_value:.3f})"
    flag = "🔻 **regressed**" if test.regressed else "no"
    return f"{flag} (p={test.p_value:.3f})"


def _verdict_cell(row: ReviewRow) -> str:
    return f"{_verdict(row.verdict)} ({_text(row.note)})" if row.note else _verdict(row.verdict)


def _order(row: ReviewRow) -> tuple[int, int, str, str]:
    test = row.regression
    return (
        0 if test is not None and test.regressed else 1,
        0 if row.verdict != "pass" else 1,
        row.eval_id,
        row.agent,
    )


def _counts(rows: Sequence[ReviewRow], cached: Sequence[ListedEval], skipped: int, unstarted: int) -> str:
    """The headline: every verdict counted once, cached ones included and said so: ``1 failed (1 cached)``."""
    parts: list[str] = []
    for verdict, label in (
        ("pass", "passed"),
        ("fail", "failed"),
        ("error", "errored"),
        ("incomplete", "incomplete"),
        ("vacuous", "vacuous"),
        ("judge_uncalibrated", "judge uncalibrated"),
    ):
        count = sum(1 for row in rows if row.verdict == verdict)
        from_cache = sum(1 for row in rows if row.verdict == verdict and row.cached)
        if count:
            parts.append(f"{count} {label}" + (f" ({from_cache} cached)" if from_cache else ""))
    regressed = sum(1 for row in rows if (test := row.regression) is not None and test.regressed)
    if regressed:
        parts.append(f"{regressed} regressed")
    # Cached entries with no row (a caller that lists them only) still count, once.
    shown = {(row.eval_id, row.agent) for row in rows if row.cached}
    listed_only = sum(1 for item in cached if (item.eval_id, item.agent) not in shown)
    for count, label in ((listed_only, "cached"), (skipped, "skipped"), (unstarted, "not started")):
        if count:
            parts.append(f"{count} {label}")
    return " · ".join(parts) if parts else "nothing to run"


def _table(rows: Sequence[ReviewRow]) -> list[str]:
    lines = [
        "| Eval | Agent | Trials passed | Verdict | Base | Regression | Cost | Duration |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in sorted(rows, key=_order):
        cells = [
            _text(row.eval_id),
            _text(row.agent),
            format_rate(row.passed, row.trials),
            _verdict_cell(row),
            _base_cell(row),
            _regression(row),
            "cached" if row.cached else _cost_cell(row),
            "cached" if row.cached else _duration(row.duration_s),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _cost_cell(row: ReviewRow) -> str:
    """The agents' cost, and the judges' apart from it on evals that judge."""
    agents = _cost(row.cost_usd)
    return f"{agents} + judges {_cost(row.judge_cost_usd)}" if row.judged else agents


def _judge_total(rows: Sequence[ReviewRow]) -> list[str]:
    """The judges' total on its own line, below the agents' (nothing when no eval judges)."""
    judged = [row for row in rows if row.judged and not row.cached]
    if not judged:
        return []
    known = [row.judge_cost_usd for row in judged if row.judge_cost_usd is not None]
    unknown = len(judged) - len(known)
    total = _cost(sum(known)) if known else "unknown"
    more = f" (plus {unknown} unknown)" if unknown and known else ""
    return [f"Judge cost: {total}{more}, apart from the agents' cost above; it counts against the budget"]


def _total_cost(rows: Sequence[ReviewRow]) -> str:
    known = [row.cost_usd for row in rows if row.cost_usd is not None]
    unknown = len(rows) - len(known)
    if not known:
        return "unknown"
    total = _cost(sum(known))
    return f"{total} (plus {unknown} unknown)" if unknown else total


def _unstable(rows: Sequence[ReviewRow]) -> list[str]:
    shown = [
        row
        for row in rows
        if row.history is not None and row.history.flakiness in ("flaky", "regressed", "recovered")
    ]
    if not shown:
        return []
    lines = ["", "### Flaky or changed on the base branch", ""]
    for row in sorted(shown, key=lambda r: (r.eval_id, r.agent)):
        history = row.history
        assert history is not None
        versions = " → ".join(_text(v or "unknown") for v in history.agent_versions)
        lines.append(
            f"- {_text(row.eval_id)} × {_text(row.agent)}: {_text(history.label)}, "
            f"{format_rate(history.passed, history.trials)} trials passed over the last {history.runs} "
            f"base-branch runs (agent {versions})"
        )
    return lines


def _listing(heading: str, entries: Sequence[ListedEval]) -> list[str]:
    if not entries:
        return []
    lines = ["", f"### {heading}", ""]
    for entry in sorted(entries, key=lambda e: (e.eval_id, e.agent or "")):
        who = f"{_text(entry.eval_id)} × {_text(entry.agent)}" if entry.agent else _text(entry.eval_id)
        lines.append(f"- {who}: {_text(entry.reason)}")
    return lines


FAILURE_LINES = 40
"""Failure lines shown per eval × agent; the transcripts hold the rest."""
FENCE = "`" * 3


def _failures(rows: Sequence[ReviewRow]) -> list[str]:
    failing = [row for row in rows if row.verdict != "pass" and row.failures]
    if not failing:
        return []
    lines = ["", "### What failed"]
    for row in sorted(failing, key=lambda r: (r.eval_id, r.agent)):
        # A fence inside a failure message would end the code block early.
        shown = [line.replace(FENCE, "'" * 3)[:500] for text in row.failures for line in text.splitlines()]
        more = len(shown) - FAILURE_LINES
        head = f"{_text(row.eval_id)} × {_text(row.agent)}: {row.passed}/{row.trials} trials passed"
        if row.cached:
            head += f" ({_text(row.note)}, not re-run)"
        lines += ["", f"<details><summary>{head}</summary>", "", FENCE + "text", *shown[:FAILURE_LINES]]
        if more > 0:
            lines.append(f"… {more} more lines in the transcripts")
        lines += [FENCE, "", "</details>"]
    return lines


def _isolation(rows: Sequence[ReviewRow]) -> list[str]:
    """``Isolation: bwrap (network: none)`` under the table, per eval where they differ (rows that ran)."""
    ran = [(row.eval_id, row.agent, label) for row in rows if (label := row.isolation) and not row.cached]
    text = isolation_text(ran)
    return ["", f"Isolation: {_text(text)}"] if text else []


def _outside(rows: Sequence[ReviewRow]) -> list[str]:
    """Per eval × agent, its trials' refused connections and writes outside the sandbox (bounded)."""
    noted = [row for row in rows if row.outside and not row.cached]
    if not noted:
        return []
    lines = ["", "### Outside the sandbox", ""]
    for row in sorted(noted, key=lambda r: (r.eval_id, r.agent)):
        lines.append(f"- {_text(row.eval_id)} × {_text(row.agent)}")
        lines += [f"  - {_text(line)}" for line in row.outside]
    return lines


def _notes(rows: Sequence[ReviewRow]) -> list[str]:
    noted = [row for row in rows if row.remarks]
    if not noted:
        return []
    lines = ["", "### Notes", ""]
    for row in sorted(noted, key=lambda r: (r.eval_id, r.agent)):
        lines += [f"- {_text(row.eval_id)} × {_text(row.agent)}: {_text(note)}" for note in row.remarks]
    return lines


def _comparisons(pairs: Sequence[ComparedPair]) -> list[str]:
    if not pairs:
        return []
    lines = ["", "### With and without", ""]
    lines += [f"- {_text(p.eval_id)} × {_text(p.agent)}: {_text(p.comparison.text())}" for p in pairs]
    alpha = ", ".join(sorted({f"{p.comparison.alpha:g}" for p in pairs}))
    return [
        *lines,
        "",
        "Each eval ran a second time without the compared instruction files and skills; "
        f"{COMPARISON_TEST_NAME} of the difference (helps or hurts at p ≤ {alpha}). Only the “with” arm's "
        "pass rate decides the verdict; “loaded” counts its trials in which every compared input reached "
        "the model.",
    ]


def render_summary(
    rows: Sequence[ReviewRow],
    *,
    cached: Sequence[ListedEval] = (),
    skipped: Sequence[ListedEval] = (),
    unstarted: Sequence[ListedEval] = (),
    artifact_url: str | None = None,
    title: str = "trialbook evals",
    comparisons: Sequence[ComparedPair] = (),
    triggers: Sequence[Mapping[str, Any]] = (),
    versions: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The job summary: counts, one table row per eval × agent that ran, then what did not run and why.

    Args:
        rows: every eval × agent that ran in this job, and every cached one (``ReviewRow.cached``), so
            a cached failure is counted, tabled and explained as the failure it is.
        cached: entries reported from history because their cache key did not move, with the reason.
        skipped: entries left out on purpose (unchanged prompt, filter, other shard).
        unstarted: entries the budget stopped before any trial ran.
        artifact_url: link to the uploaded results folder, when known.
        title: heading of the section; matrix jobs put their shard here.
        comparisons: with/without comparisons of evals with ``compare:``.
        triggers: trigger evals as the manifest keeps them (``triggers:``, docs/triggers.md).
        versions: one agent at two versions, as the manifest keeps them (docs/agents.md).
    """
    lines = [f"## {_text(title)}", "", f"**{_counts(rows, cached, len(skipped), len(unstarted))}**"]
    if rows:
        lines += ["", *_table(rows), "", f"Total cost: {_total_cost(rows)}", *_judge_total(rows)]
        lines += _isolation(rows)
        alpha = rows[0].alpha
        lines += [
            "",
            "Trials passed: the count, then the 95% Wilson interval of the pass rate, the range of rates "
            "that count is consistent with (2/3 can come from an agent that passes 21% of the time).",
            "",
            f"Regression: {REGRESSION_TEST_NAME} of this run's trials against the base's last recorded "
            f"result (flagged at p ≤ {alpha:g}). It is exact for the handful of trials an eval runs, where "
            "approximate tests mislead.",
        ]
        if any(row.compared_with_window for row in rows):
            lines += [
                "",
                "A flaky eval is tested against all its trials over recent base-branch runs instead: "
                "“within the usual range” means a result this low turns up often enough on the base "
                f"branch itself (p > {alpha:g}), so it is not a regression.",
            ]
    lines += _comparisons(comparisons)
    lines += markdown_lines(triggers, _text)
    lines += version_lines(versions, _text)
    lines += _unstable(rows)
    lines += _failures(rows)
    lines += _outside(rows)
    lines += _notes(rows)
    lines += _listing("Cached (not re-run)", cached)
    lines += _listing("Skipped", skipped)
    lines += _listing("Not started (budget reached)", unstarted)
    lines.append("")
    if artifact_url:
        # report.html is the trial viewer the action writes into the artifact (docs/viewer.md).
        lines.append(f"Transcripts, evidence, report.html: [results artifact]({artifact_url})")
    else:
        lines.append("Transcripts and evidence: no artifact link available for this run.")
    return "\n".join(lines) + "\n"


def render_pr_comment(
    rows: Sequence[ReviewRow],
    *,
    cached: Sequence[ListedEval] = (),
    skipped: Sequence[ListedEval] = (),
    unstarted: Sequence[ListedEval] = (),
    artifact_url: str | None = None,
    title: str = "trialbook evals",
    run_url: str | None = None,
    limit: int = COMMENT_LIMIT,
    marker: str = STICKY_MARKER,
    head_sha: str | None = None,
    updated_at: str | None = None,
    comparisons: Sequence[ComparedPair] = (),
    triggers: Sequence[Mapping[str, Any]] = (),
    versions: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The sticky PR comment: the summary's content under the hidden marker, cut to fit GitHub's limit.

    The marker is the first line so the comment client can find this comment again and edit it in place
    instead of adding a new one on every push. ``head_sha`` and ``updated_at`` (shown under the heading,
    the commit also as a hidden ``trialbook:head`` marker) say which commit the results are for and when
    they were posted, since one comment is edited through a PR's whole life.
    """
    body = render_summary(
        rows,
        cached=cached,
        skipped=skipped,
        unstarted=unstarted,
        artifact_url=artifact_url,
        title=title,
        comparisons=comparisons,
        triggers=triggers,
        versions=versions,
    )
    stamp = [
        f"commit {_text(head_sha[:7])}" if head_sha else "",
        f"updated {_text(updated_at)}" if updated_at else "",
    ]
    shown = " · ".join(part for part in stamp if part)
    if shown:
        # Under the heading: "## title\n\n**counts**" becomes "## title\n\nResults for …\n\n**counts**".
        body = body.replace("\n\n", f"\n\nResults for {shown}\n\n", 1)
    hidden = (
        f"<!-- trialbook:head={head_sha} -->\n"
        if head_sha and re.fullmatch(r"[0-9a-f]{7,64}", head_sha)
        else ""
    )
    footer = f"\n[Workflow run]({run_url})\n" if run_url else ""
    text = f"{marker}\n{hidden}{body}{footer}"
    if len(text) <= limit:
        return text
    note = "\n…\n\nThis comment was cut to fit GitHub's size limit; the job summary has every row.\n"
    room = limit - len(note) - len(footer)
    cut = text.rfind("\n", 0, room)
    return text[: max(cut, len(marker) + len(hidden))] + note + footer
