"""The pytest plugin through pytester: outcomes, properties, executions, failed writes, xdist."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trialbook._util.owner import owner_tag, start_time
from trialbook.evidence import load_suite

AGENT_TEST = """
import pytest
from trialbook.agents import AgentSpec

@pytest.mark.asyncio
async def test_literal(agent_eval, tmp_path, record_property):
    (tmp_path / "p.md").write_text("x")
    result = await agent_eval(AgentSpec("shout", {"script": "echo hi > hi.txt"}), "say hi", workdir=tmp_path)
    record_property("files", sorted(p.name for p in tmp_path.iterdir()))
    assert result.success

@pytest.mark.asyncio
async def test_fails_after_running(agent_eval, tmp_path):
    await agent_eval(AgentSpec("shout", {"script": "true"}), "go", workdir=tmp_path)
    assert 1 == 2, "wrong answer"

@pytest.fixture
def broken_cleanup():
    yield
    raise RuntimeError("cleanup broke")

@pytest.mark.asyncio
async def test_cleanup_error_is_not_a_pass(agent_eval, tmp_path, broken_cleanup, record_property):
    await agent_eval(AgentSpec("shout", {"script": "true"}), "go", workdir=tmp_path)
    record_property("ran", True)

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trialbook-unsafe-local", *args)


def test_the_suite_records_outcomes_properties_and_executions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=AGENT_TEST)
    out = pytester.path / "evidence" / "suite.json"
    result = run(pytester, f"--trialbook-evidence={out}")
    # pytest counts the cleanup-error test twice: its call passed, its teardown errored
    result.assert_outcomes(passed=2, failed=1, errors=1, skipped=1, xfailed=1)
    suite = load_suite(out)
    tests = {t.id.split("::")[-1]: t for t in suite.tests}
    assert tests["test_literal"].outcome == "passed"
    assert tests["test_literal"].properties == {"files": ["hi.txt", "p.md"]}
    [execution] = tests["test_literal"].executions
    assert execution.result.agent_name == "shout" and execution.result.success
    failed = tests["test_fails_after_running"]
    assert failed.outcome == "failed" and "wrong answer" in failed.assertion_errors[0]
    assert len(failed.executions) == 1
    cleanup = tests["test_cleanup_error_is_not_a_pass"]
    assert cleanup.outcome == "error" and len(cleanup.executions) == 1
    assert cleanup.properties == {"ran": True}
    assert any("cleanup broke" in e for e in cleanup.assertion_errors)
    assert tests["test_skipped"].outcome == "skipped" and tests["test_xfail"].outcome == "xfailed"
    assert suite.outcome_counts["passed"] == 1 and suite.outcome_counts["error"] == 1


def test_a_failed_write_makes_pytest_fail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    assert True\n")
    blocker = pytester.path / "blocker"
    blocker.write_text("a file where a folder should be")
    result = run(pytester, f"--trialbook-evidence={blocker / 'suite.json'}")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*trialbook: could not write evidence*"])


UNENCODABLE = """
def test_good(record_property):
    record_property('kept', [1, 2])

def test_bad(record_property):
    record_property('fine', 'yes')
    record_property('x', object())
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["plain", "xdist"])
def test_an_unencodable_property_fails_the_run_naming_the_test_and_keeps_the_rest(
    pytester: pytest.Pytester, workers: tuple[str, ...]
) -> None:
    pytester.makepyfile(test_prop=UNENCODABLE)
    out = pytester.path / "suite.json"
    result = run(pytester, *workers, f"--trialbook-evidence={out}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*trialbook: test_prop.py::test_bad: part of this test's record cannot be saved*"]
    )
    tests = {t.id.split("::")[-1]: t for t in load_suite(out).tests}
    assert tests["test_good"].outcome == "passed" and tests["test_good"].properties == {"kept": [1, 2]}
    bad = tests["test_bad"]
    assert bad.outcome == "error", "never stringified, never silently dropped"
    assert bad.properties == {"fine": "yes"}
    assert "properties.x" in bad.assertion_errors[-1]


CRASHING = """
import os

def test_a_passes(record_property):
    record_property('before', 'crash')

def test_b_kills_its_worker():
    os._exit(1)
"""


def test_a_worker_killed_after_a_passing_test_keeps_that_tests_record(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_crash=CRASHING)
    out = pytester.path / "suite.json"
    # Both tests on one worker (loadfile), so the worker that dies is the one that ran the passing test.
    result = run(pytester, "-n", "2", "--dist", "loadfile", f"--trialbook-evidence={out}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    tests = {t.id.split("::")[-1]: t for t in load_suite(out).tests}
    assert tests["test_a_passes"].outcome == "passed"
    assert tests["test_a_passes"].properties == {"before": "crash"}
    crashed = tests["test_b_kills_its_worker"]
    assert crashed.outcome == "error"
    assert any("crashed while running" in e for e in crashed.assertion_errors)
    assert crashed.duration_s is not None, "its setup phase reached the controller and is kept"


@pytest.mark.parametrize("blocked", [(), ("-p", "no:xdist")], ids=["loaded", "blocked"])
def test_the_evidence_file_does_not_need_xdist(pytester: pytest.Pytester, blocked: tuple[str, ...]) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    assert True\n")
    out = pytester.path / "suite.json"
    result = run(pytester, *blocked, f"--trialbook-evidence={out}")
    assert result.ret == 0, result.stdout.str()
    assert [t.outcome for t in load_suite(out).tests] == ["passed"]


def test_a_killed_sessions_temp_file_beside_the_evidence_is_removed(pytester: pytest.Pytester) -> None:
    """The next session writing there removes it; a live writer's and another tool's are left alone."""
    pytester.makepyfile(test_ok="def test_ok():\n    assert True\n")
    out = pytester.path / "evidence" / "suite.json"
    out.parent.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    dead_tag = f"{sleeper.pid}_{start_time(sleeper.pid)}"
    sleeper.kill()
    sleeper.wait()
    dead = out.parent / f".suite.json.{dead_tag}.ab12cd34.tmp"
    live = out.parent / f".suite.json.{owner_tag()}.ef56ab78.tmp"  # this process is still running
    foreign = out.parent / ".suite.json.ab12cd34.tmp"
    for path in (dead, live, foreign):
        path.write_text('{"half": ')
    result = run(pytester, f"--trialbook-evidence={out}")
    assert result.ret == 0, result.stdout.str()
    assert sorted(p.name for p in out.parent.iterdir()) == sorted([foreign.name, live.name, "suite.json"])
    assert [t.outcome for t in load_suite(out).tests] == ["passed"]


def test_without_the_option_nothing_is_written_and_pytest_is_unchanged(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_ok="def test_ok():\n    assert True\n")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    assert not list(Path(pytester.path).glob("**/*.json"))


def test_the_plugin_does_not_import_the_sdk(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mods="import sys\ndef test_m():\n    assert 'copilot' not in sys.modules\n")
    run(pytester).assert_outcomes(passed=1)


def test_under_xdist_only_the_controller_writes_every_worker_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_agents=AGENT_TEST)
    out = pytester.path / "suite.json"
    result = run(pytester, "-n", "2", f"--trialbook-evidence={out}")
    # pytest counts the cleanup-error test twice: its call passed, its teardown errored
    result.assert_outcomes(passed=2, failed=1, errors=1, skipped=1, xfailed=1)
    suite = load_suite(out)
    assert len(suite.tests) == 5
    assert sum(len(t.executions) for t in suite.tests) == 3
    data = json.loads(out.read_text())
    assert data["schema_version"] == "4.0"
    assert sys.version_info >= (3, 11)


def test_agents_do_not_run_outside_ci_without_the_unsafe_local_flag(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_refused="""
import pytest
from trialbook.agents import AgentSpec

@pytest.mark.asyncio
async def test_refused(agent_eval, tmp_path):
    await agent_eval(AgentSpec("shout", {"script": "touch ran.txt"}), "go", workdir=tmp_path)
    assert (tmp_path / "ran.txt").exists()
"""
    )
    pytester.makeini("[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n")
    monkeypatch.delenv("CI", raising=False)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*only in CI (CI=true) or with --trialbook-unsafe-local*"])
    allowed = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--trialbook-unsafe-local")
    allowed.assert_outcomes(passed=1)
