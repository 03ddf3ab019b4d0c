"""The HTML viewer in a real headless Chromium: offline, faithful to suite.json, and usable."""

from __future__ import annotations

import base64
import html
import json
import os
import shutil
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.viewer.conftest import CANARY, HistoryRun, IsolatedRun, Watched, run_cli, suite_of

Open = Callable[[Path], Watched]
DOCS_IMAGES = os.environ.get("TRIALBOOK_DOCS_SCREENSHOTS")  # set to docs/images to refresh the docs' pictures


def render(run: Path, out: Path, *extra: str) -> Path:
    result = run_cli("report", str(run), "--html", str(out), *extra)
    assert result.exit_code == 0, result.output
    assert out.is_file()
    return out


def expected_verdicts(suite: dict[str, Any]) -> dict[str, str]:
    out = {}
    for test in suite["tests"]:
        if test["outcome"] in ("cached", "skipped"):
            out[test["id"]] = test["outcome"]
        else:
            out[test["id"]] = test["properties"].get("verdict") or test["outcome"]
    return out


def shown_rows(watched: Watched) -> dict[str, str]:
    rows = watched.page.locator("#overview tbody tr:not(.hidden)")
    return {
        rows.nth(i).get_attribute("data-id") or "": rows.nth(i).get_attribute("data-verdict") or ""
        for i in range(rows.count())
    }


def assert_clean(watched: Watched, page_file: Path) -> None:
    assert watched.errors == []
    assert watched.requests == [page_file.as_uri()] or set(watched.requests) == {page_file.as_uri()}


def screenshot(watched: Watched, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.png"
    watched.page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000
    if DOCS_IMAGES:
        Path(DOCS_IMAGES).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(DOCS_IMAGES) / path.name)


def test_overview_matches_the_suite_and_loads_nothing(
    example_run: Path, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(example_run, tmp_path / "report.html")
    watched = open_page(page_file)
    expected = expected_verdicts(suite_of(example_run))
    assert len(expected) == 5
    assert shown_rows(watched) == expected
    assert expected["flaky-deploy::literal"] == "fail"
    assert watched.page.locator("tr[data-id='flaky-deploy::literal'] td").nth(2).inner_text() == "2/4"
    screenshot(watched, tmp_path, "viewer-overview")
    assert_clean(watched, page_file)


def test_filter_and_sort(example_run: Path, tmp_path: Path, open_page: Open) -> None:
    page_file = render(example_run, tmp_path / "report.html")
    watched = open_page(page_file)
    page = watched.page
    page.select_option("#f-verdict", "fail")
    assert set(shown_rows(watched)) == {"flaky-deploy::literal", "leaky::leaky"}
    page.select_option("#f-agent", "literal")
    assert set(shown_rows(watched)) == {"flaky-deploy::literal"}
    page.select_option("#f-verdict", "")
    page.select_option("#f-agent", "")
    page.fill("#f-id", "DEP")
    assert set(shown_rows(watched)) == {"deploy::literal", "flaky-deploy::literal"}
    page.fill("#f-id", "")
    assert len(shown_rows(watched)) == 5

    def order() -> list[str]:
        rows = page.locator("#overview tbody tr")
        return [rows.nth(i).get_attribute("data-eval") or "" for i in range(rows.count())]

    page.click("th[data-sort=eval]")
    assert order() == sorted(order())
    page.click("th[data-sort=eval]")
    assert order() == sorted(order(), reverse=True)
    page.click("th[data-sort=rate]")
    rates = [
        float(page.locator("#overview tbody tr").nth(i).get_attribute("data-rate") or "nan") for i in range(5)
    ]
    assert rates == sorted(rates)
    assert_clean(watched, page_file)


def failing_key(suite: dict[str, Any], test_id: str) -> tuple[str, str]:
    test = next(t for t in suite["tests"] if t["id"] == test_id)
    bad = next(e["trial"] for e in test["executions"] if e["passed"] is False)
    good = next(e["trial"] for e in test["executions"] if e["passed"] is True)
    return f"{test_id}#{good}", f"{test_id}#{bad}"


def test_failing_trial_shows_the_failing_assertion_and_the_diff(
    example_run: Path, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(example_run, tmp_path / "report.html")
    watched = open_page(page_file)
    page = watched.page
    _, bad = failing_key(suite_of(example_run), "flaky-deploy::literal")
    page.click("tr[data-id='flaky-deploy::literal'] a.dot.fail >> nth=0")
    assert page.url.endswith(urllib.parse.quote(f"#trial={bad}", safe="#=:")) or bad in urllib.parse.unquote(
        page.url
    )
    trial = page.locator("#trial")
    failed = trial.locator("tr.failed-assertion", has_text="file_contains")
    assert failed.count() == 1
    assert "✗ fail" in failed.inner_text()
    changes = trial.locator(".changes")
    assert "notes.txt" in changes.inner_text()
    assert "+draft" in changes.locator("pre.diff").first.inner_text()
    assert "exit 3" in trial.locator("table.timeline").inner_text()
    assert "Left the guide's literal path at step 2 of 3" in trial.inner_text()
    assert page.locator("#trial details.tool").count() >= 2
    screenshot(watched, tmp_path, "viewer-trial")
    assert_clean(watched, page_file)


def test_pass_and_fail_side_by_side(example_run: Path, tmp_path: Path, open_page: Open) -> None:
    page_file = render(example_run, tmp_path / "report.html")
    watched = open_page(page_file)
    page = watched.page
    page.click("tr[data-id='flaky-deploy::literal'] >> text=pass vs fail")
    compare = page.locator("#compare")
    assert (
        "First divergence at aligned row 1" in compare.inner_text()
        or "First divergence" in compare.inner_text()
    )
    assert compare.locator("tr.first-diverge").count() == 1
    assert "left the guide's literal path at step 2 of 3" in compare.inner_text()
    assert compare.locator("tr.diverge", has_text="notes.txt").count() == 1
    screenshot(watched, tmp_path, "viewer-compare")
    assert_clean(watched, page_file)


def test_a_long_step_output_shows_its_excerpt_and_links_the_whole_file(
    loud_run: Path, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(loud_run, tmp_path / "report.html")
    watched = open_page(page_file)
    page = watched.page
    for key, stored in [("loud::literal#1", "literal/step-1.out"), ("loud::loud#1", "script.log")]:
        page.goto(page_file.as_uri() + "#trial=" + urllib.parse.quote(key, safe=":"))
        tool = page.locator("#trial details.tool").first
        tool.locator(":scope > summary").click()
        tool.locator("details.fold > summary").first.click()  # the long output is folded: unfold it
        shown = tool.inner_text()
        # The record's excerpt: both ends of the output, and the line naming the file that has it all.
        assert "1\n2\n3\n" in shown and "99999\n100000" in shown
        assert f"left out here; the whole output is in {stored} in the trial folder" in shown
        assert "\n50000\n" not in shown
        link = tool.locator("a.output-file")
        assert link.inner_text() == stored
        target = Path(urllib.parse.unquote(urllib.parse.urlparse(link.get_attribute("href") or "").path))
        if not target.is_absolute():
            target = page_file.parent / target
        whole = target.read_text()
        assert "\n50000\n" in whole and whole.count("\n") >= 100_000
    # The literal step after it is short: its output is shown whole, with its file linked too.
    page.goto(page_file.as_uri() + "#trial=" + urllib.parse.quote("loud::literal#1", safe=":"))
    second = page.locator("#trial details.tool").nth(1)
    second.locator(":scope > summary").click()
    assert "finished" in second.inner_text() and "left out" not in second.inner_text()
    assert_clean(watched, page_file)


def masked_forms(secret: str) -> list[str]:
    raw = secret.encode()
    return [
        secret,
        html.escape(secret),
        json.dumps(secret)[1:-1],
        urllib.parse.quote(secret),
        urllib.parse.quote_plus(secret),
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        raw.hex(),
        "-9d2f7Q",  # the canary's unique tail survives no escaping
    ]


def test_a_secret_printed_by_an_agent_is_not_in_the_page(
    example_run: Path, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(example_run, tmp_path / "report.html")
    text = page_file.read_text()
    for form in masked_forms(CANARY):
        assert form not in text, form
    watched = open_page(page_file)
    page = watched.page
    page.goto(page_file.as_uri() + "#trial=leaky::leaky#1")
    body = page.locator("#trial").inner_text()
    assert "token=***" in body
    assert "token.txt" in body
    # No shims, so no call log: the page says the commands went unwatched, not that there were none.
    assert "No shims: this trial's commands were not recorded." in body
    assert "No shimmed command was called." not in body
    assert CANARY not in page.content()
    # What the agent printed is text, never markup: no element, no request, no script run.
    assert '<img src="http://127.0.0.1:9/x.png"' in body
    assert "<img src=x onerror=alert(1)>.txt" in body
    assert page.locator("#trial img, #trial b, #trial script").count() == 0
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert_clean(watched, page_file)


def test_a_budget_stopped_run_shows_incomplete_rows(
    cancelled_run: Path, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(cancelled_run, tmp_path / "report.html")
    watched = open_page(page_file)
    expected = expected_verdicts(suite_of(cancelled_run))
    assert set(expected.values()) == {"incomplete"}
    assert shown_rows(watched) == expected
    reasons = watched.page.locator("#overview .reason").all_inner_texts()
    assert any("not started" in reason for reason in reasons)
    screenshot(watched, tmp_path, "viewer-incomplete")
    assert_clean(watched, page_file)


def test_history_trends_are_inline_svg(history_run: HistoryRun, tmp_path: Path, open_page: Open) -> None:
    page_file = render(
        history_run.results, tmp_path / "report.html", "--history-dir", str(history_run.history)
    )
    watched = open_page(page_file)
    page = watched.page
    page.click("nav >> text=History")
    row = page.locator("#history tbody tr[data-id='flaky-deploy::literal']")
    assert row.count() == 1
    assert row.locator("svg.trend").first.locator("circle").count() == 4
    assert row.locator("line.version").count() >= 1
    assert "0.0.9 →" in row.inner_text()
    assert row.locator(".badge").inner_text() in ("flaky", "stable-fail", "stable-pass")
    screenshot(watched, tmp_path, "viewer-history")
    assert_clean(watched, page_file)


def test_a_run_cancelled_by_ctrl_c_shows_what_finished(
    interrupted_run: Path, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(interrupted_run, tmp_path / "report.html")
    watched = open_page(page_file)
    suite = suite_of(interrupted_run)
    expected = expected_verdicts(suite)
    assert expected == {"hang::hanger": "incomplete"}
    assert shown_rows(watched) == expected
    row = watched.page.locator("tr.row[data-id='hang::hanger']")
    properties = suite["tests"][0]["properties"]
    assert properties["cancelled_trials"] == 2  # the hanging trial and the one never started
    assert "run cancelled: 2 of 3 trials did not finish" in row.inner_text()
    assert row.locator("a.dot").count() == len(suite["tests"][0]["executions"])
    assert_clean(watched, page_file)


def test_each_evals_isolation_and_what_its_trials_did_outside_are_shown(
    isolated_run: IsolatedRun, tmp_path: Path, open_page: Open
) -> None:
    page_file = render(isolated_run.results, tmp_path / "report.html")
    watched = open_page(page_file)
    page = watched.page
    walled = page.locator("tr.row[data-id='walled::s'] .isolation")
    assert walled.inner_text() == "isolation: bwrap (network: none)"
    assert page.locator("tr.row[data-id='open::s'] .isolation").inner_text() == "isolation: none"
    page.goto(page_file.as_uri() + "#trial=walled::s#1")
    trial = page.locator("#trial")
    assert "bwrap (network: none)" in trial.locator("dl.kv").inner_text()
    outside = trial.locator(".outside")
    assert outside.locator(".refused-count").inner_text() == "Connections refused (1):"
    assert outside.locator("ul.refused li").all_inner_texts() == [f"127.0.0.1:{isolated_run.port}"]
    rows = outside.locator("table.writes tbody tr")
    written = {tuple(rows.nth(i).locator("td").all_inner_texts()) for i in range(rows.count())}
    assert written == {("/tmp/scratch.txt", "2 bytes"), ("~/.bashrc", "2 bytes")}
    screenshot(watched, tmp_path, "viewer-isolation")
    page.goto(page_file.as_uri() + "#trial=open::s#1")
    assert "Not watched (this trial ran without isolation)" in page.locator("#trial .outside").inner_text()
    assert page.locator("#trial table.writes").count() == 0
    assert_clean(watched, page_file)
