"""Bounded output: an agent printing 200 MB costs trialbook neither 200 MB of memory nor of disk.

A real ``trialbook eval`` runs a script agent that writes 200 MB to stdout. Its own peak RSS (read by a
small launcher with ``wait4``) stays under 150 MB, everything the run wrote together holds the limit once
plus a small bound (the output is stored once, in ``script.log``; the records carry an excerpt naming
it), and the evidence says the stream was cut. A secret laid across the cut point is masked whole, and a
literal agent's step output is bounded and stored once the same way."""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import textwrap
from pathlib import Path

import pytest

from trialbook.agents._excerpt import EXCERPT_HEAD, EXCERPT_TAIL
from trialbook.evidence import load_suite

from ..peak import measure
from .escapes import TRIALBOOK, trialbook

DEFAULT_LIMIT = 10 * 1024 * 1024
PEAK_RSS_LIMIT_KB = 150 * 1024
ADDRESS_SPACE_LIMIT = 4 << 30  # a guard only: the peak RSS is what the test asserts
BIG = 200_000_000
MARKER = re.compile(rb"\n\[trialbook: (\d+) bytes of output cut here, [^\]\n]*\]\n")
EXCERPT_MARKER = re.compile(
    rb"\n\[trialbook: (\d+) bytes of this output left out here; the whole output is in (\S+) in the trial "
    rb"folder\]\n"
)
EXCERPT_BYTES = EXCERPT_HEAD + EXCERPT_TAIL
STORED_ONCE_SLACK = 128 * 1024  # every record, log and report of a one-trial run, the excerpts included


def _files_written(root: Path) -> dict[Path, int]:
    """Every file under ``root`` with its size, each counted once (a link to a run is not a second run)."""
    seen: set[tuple[int, int]] = set()
    sizes: dict[Path, int] = {}
    for path in root.rglob("*"):
        if path.is_symlink() or not path.is_file():
            continue
        stat = path.stat()
        if (stat.st_dev, stat.st_ino) not in seen:
            seen.add((stat.st_dev, stat.st_ino))
            sizes[path] = stat.st_size
    return sizes


def _largest(sizes: dict[Path, int]) -> str:
    return ", ".join(f"{path.name}: {size}" for path, size in sorted(sizes.items(), key=lambda i: -i[1])[:6])


def _write_eval(root: Path, body: str) -> Path:
    evals = root / "evals"
    evals.mkdir(parents=True, exist_ok=True)
    (evals / "loud.eval.yaml").write_text(body)
    return root / ".trialbook/runs/latest"


def _script_eval(name: str, script: str, extra: str = "") -> str:
    return (
        f"prompt_text: shout\nagents:\n  - name: {name}\n    script: |\n"
        + textwrap.indent(script, "      ")
        + "negative_control: false\n"
        + extra
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="wait4 peak RSS is read on Linux")
def test_a_200_mb_output_keeps_memory_flat_and_the_results_within_the_limit(tmp_path: Path) -> None:
    script = f"head -c {BIG} /dev/zero | tr '\\0' a\nprintf '\\nTHE-END\\n'\n"
    results = _write_eval(tmp_path, _script_eval("loud", script, "assert:\n  - succeeds: 'true'\n"))
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "CI": "true", "TMPDIR": str(tmp_path / "tmp")}
    env.pop("GITHUB_ACTIONS", None)
    measured = measure(
        [str(TRIALBOOK), "eval", "evals"], cwd=tmp_path, address_space=ADDRESS_SPACE_LIMIT,
        timeout_s=300, env=env,
    )  # fmt: skip
    assert measured.code == 0, measured.stderr
    assert 0 < measured.peak_kb < PEAK_RSS_LIMIT_KB, f"peak RSS {measured.peak_kb} KB"

    # The output is stored once: everything the run wrote, together, is the limit plus a small bound.
    written = _files_written(tmp_path / ".trialbook")
    assert sum(written.values()) <= DEFAULT_LIMIT + STORED_ONCE_SLACK, _largest(written)
    assert not list((tmp_path / "tmp").iterdir())  # and nothing was left in the temporary folder
    trial = results / "evals/loud/loud/trial-1"
    dropped = BIG + len("\nTHE-END\n") - DEFAULT_LIMIT
    log = (trial / "script.log").read_bytes()
    (match,) = MARKER.finditer(log)
    assert int(match.group(1)) == dropped
    assert log.endswith(b"THE-END\n--- exit code 0 ---\n")
    assert len(log) - len(match.group(0)) <= DEFAULT_LIMIT + len(script) + 100  # the limit, the command

    # The evidence says it was cut, and its records carry an excerpt naming script.log.
    document = json.loads((trial / "result.json").read_text())
    assert document["output_truncated"] == {"script": dropped, "check-1": 0}
    (call,) = document["result"]["all_tool_calls"]
    output = call["result"].encode()
    (left,) = EXCERPT_MARKER.finditer(output)
    assert left.group(2) == b"script.log"
    assert len(output) - len(left.group(0)) == EXCERPT_BYTES
    assert int(left.group(1)) == DEFAULT_LIMIT + len(match.group(0)) - EXCERPT_BYTES
    assert output.startswith(b"a" * 1000) and output.endswith(b"THE-END\n")
    closing = document["result"]["turns"][-1]["content"]
    assert len(closing) < 4200 and closing.endswith("THE-END\n")  # the end of it, not a second copy
    assert "are in script.log" in closing

    raw = json.loads((results / "suite.json").read_text())
    assert raw["tests"][0]["properties"]["output_truncated"] == [{"script": dropped, "check-1": 0}]
    assert raw["tests"][0]["executions"][0]["result"]["all_tool_calls"][0]["result"] == call["result"]
    assert load_suite(results / "suite.json").tests[0].outcome == "passed"


def test_a_secret_across_the_cut_point_is_masked_everywhere(tmp_path: Path) -> None:
    secret = secrets.token_hex(16)
    limit = 64 * 1024
    head = limit - limit // 2
    # The secret starts 10 bytes before the cut, so the cut runs through it; the pipe's reads split it
    # wherever they fall. It is also printed where its mask spans the record's excerpt cut.
    before = EXCERPT_HEAD - 2
    script = (
        f"head -c {before} /dev/zero | tr '\\0' x\n"
        'printf %s "$TB_SECRET"\n'
        f"head -c {head - 10 - before - 3} /dev/zero | tr '\\0' x\n"
        'printf %s "$TB_SECRET"\n'
        "head -c 300000 /dev/zero | tr '\\0' y\n"
    )
    body = _script_eval("leaky", script, f"limits: {{output: {limit}}}\n")
    body = body.replace("    script: |", "    env: {TB_SECRET: '{{ secrets.TB_SECRET }}'}\n    script: |")
    body += "secrets: [TB_SECRET]\nassert:\n  - succeeds: 'printf %s \"$TB_SECRET\"; false'\n"
    results = _write_eval(tmp_path, body)
    process = trialbook(tmp_path, "eval", "evals", cgroup=False, env={"TB_SECRET": secret})
    out, err = process.communicate(timeout=180)
    assert process.returncode == 1, (out + err).decode()
    trial = results / "evals/loud/leaky/trial-1"
    log = (trial / "script.log").read_bytes()
    (match,) = MARKER.finditer(log)
    # Masked before the cut: the mask stands whole in the head, right after the filler.
    assert b"x" * 100 + b"***" + b"y" * 7 + match.group(0) in log
    pieces = {secret[i : i + 8].encode() for i in range(len(secret) - 7)}
    files = [path for path in results.rglob("*") if path.is_file()]
    assert files
    for name, data in [*((str(p), p.read_bytes()) for p in files), ("terminal", out + err)]:
        assert not [piece for piece in pieces if piece in data], f"{name}: part of the secret appears raw"
    document = json.loads((trial / "result.json").read_text())
    assert document["output_truncated"]["script"] == int(match.group(1)) > 0
    assert "***" in document["assertions"][0]["actual"]
    # The record's excerpt is cut from the masked text and not inside the mask: it ends before it.
    (call,) = document["result"]["all_tool_calls"]
    assert call["result"].startswith("x" * before + "\n[trialbook: ")
    assert EXCERPT_MARKER.search(call["result"].encode())


def _run_literal(root: Path, steps: list[str], extra: str = "") -> tuple[Path, bytes, bytes]:
    """A passing ``trialbook eval`` of a guide with these one-line bash steps, for the literal agent."""
    fence = "```"
    blocks = "".join(f"  {fence}bash\n  {step}\n  {fence}\n\n" for step in steps)
    results = _write_eval(
        root,
        f"agents: [literal]\nprompt_text: |\n  Print.\n\n{blocks}"
        f"{extra}negative_control: false\nassert:\n  - succeeds: 'true'\n",
    )
    process = trialbook(root, "eval", "evals", cgroup=False)
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, (out + err).decode()
    return results, out, err


def test_a_literal_steps_output_is_cut_to_the_limit(tmp_path: Path) -> None:
    limit = 4096
    results, out, err = _run_literal(tmp_path, ["seq 1 200000"], "limits: {output: 4KiB}\n")
    trial = results / "evals/loud/literal/trial-1"
    step = (trial / "literal/step-1.out").read_bytes()
    (match,) = MARKER.finditer(step)
    data = b"".join(f"{n}\n".encode() for n in range(1, 200001))
    assert len(step) - len(match.group(0)) == limit
    assert step.startswith(b"1\n2\n3\n") and step.endswith(b"199999\n200000\n")
    document = json.loads((trial / "result.json").read_text())
    assert document["output_truncated"] == {"shell": 0, "step-1": len(data) - limit, "check-1": 0}
    assert int(match.group(1)) == len(data) - limit
    (call,) = document["result"]["all_tool_calls"]
    assert call["result"].encode() == step  # the result holds the same cut output, once
    assert "output cut at the limit: step-1" in (out + err).decode()


def test_a_literal_steps_big_output_is_stored_once_in_its_step_file(tmp_path: Path) -> None:
    count = 2_000_000  # 14.9 MB of numbers: cut at the default limit
    results, _, _ = _run_literal(tmp_path, [f"seq 1 {count}", "echo done"])
    written = _files_written(tmp_path / ".trialbook")
    assert sum(written.values()) <= DEFAULT_LIMIT + STORED_ONCE_SLACK, _largest(written)
    trial = results / "evals/loud/literal/trial-1"
    step = (trial / "literal/step-1.out").read_bytes()
    (cut,) = MARKER.finditer(step)
    assert len(step) - len(cut.group(0)) == DEFAULT_LIMIT
    assert step.startswith(b"1\n2\n3\n") and step.endswith(f"{count - 1}\n{count}\n".encode())
    # literal.log is the index: it names each step's file and size, and repeats no output.
    log = (trial / "literal.log").read_text()
    assert f"--- output: literal/step-1.out, {len(step)} bytes ---" in log
    assert "--- output: literal/step-2.out, 5 bytes ---" in log
    assert len(log) < 1024
    document = json.loads((trial / "result.json").read_text())
    assert document["output_truncated"]["step-1"] == int(cut.group(1)) > 0
    first, second = document["result"]["all_tool_calls"]
    output = first["result"].encode()
    (left,) = EXCERPT_MARKER.finditer(output)
    assert left.group(2) == b"literal/step-1.out"
    assert int(left.group(1)) == len(step) - (len(output) - len(left.group(0)))
    assert output.startswith(b"1\n2\n3\n") and output.endswith(f"{count}\n".encode())
    assert second["result"] == "done\n"  # a short output is its own record
    suite = json.loads((results / "suite.json").read_text())
    (execution,) = suite["tests"][0]["executions"]
    assert execution["result"]["all_tool_calls"] == document["result"]["all_tool_calls"]
