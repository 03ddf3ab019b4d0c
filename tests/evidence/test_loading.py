"""The loaded decision: from what was sent, never guessed; only a request's own context counts."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given
from hypothesis import strategies as st

from trialbook.evidence import (
    AgentResult,
    DeclaredInput,
    InstructionLoad,
    JsonValue,
    LoadTracker,
    dump_result,
    load_result,
    loaded_from_requests,
    request_context,
)

RULE = "Always run\n  make check\nbefore you commit."
AGENTS = DeclaredInput.instruction_file("AGENTS.md", "ab" * 32, RULE)
SKILL = DeclaredInput.skill(
    ".claude/skills/deploy", "cd" * 32, "Deploys the app to production.", "---\nname: deploy\n---\nRun x.\n"
)


def test_null_without_an_audit_true_when_sent_false_when_audited_and_absent() -> None:
    assert loaded_from_requests([AGENTS, SKILL], None) == (
        InstructionLoad("AGENTS.md", "instructions", "ab" * 32, None),
        InstructionLoad(".claude/skills/deploy", "skill", "cd" * 32, None),
    )
    sent = "You are helpful.\n<instructions>Always run make check before\nyou commit.</instructions>"
    assert [row.loaded for row in loaded_from_requests([AGENTS, SKILL], [sent])] == [True, False]
    # An audit that saw no request at all decides nothing either.
    assert [row.loaded for row in loaded_from_requests([AGENTS], [])] == [None]


def test_an_instructions_file_loses_its_front_matter_and_keeps_its_words() -> None:
    scoped = DeclaredInput.instruction_file(
        "x.instructions.md", "0" * 64, "---\napplyTo: '**'\n---\nUse tabs.\n"
    )
    assert scoped.needles == ("Use tabs.",)
    assert loaded_from_requests([scoped], ["rules: Use   tabs."])[0].loaded is True
    # A file with no words cannot be shown to have been sent, or not.
    empty = DeclaredInput.instruction_file("AGENTS.md", "0" * 64, "---\nx: 1\n---\n  \n")
    assert loaded_from_requests([empty], ["anything"])[0].loaded is None


def test_a_skill_counts_when_listed_or_invoked() -> None:
    assert loaded_from_requests([SKILL], ["- deploy: Deploys the app to production."])[0].loaded is True
    assert loaded_from_requests([SKILL], ["<skill>Run x.</skill>"])[0].loaded is True


def test_the_context_leaves_tool_output_out() -> None:
    anthropic: JsonValue = {
        "system": [{"type": "text", "text": "sys"}],
        "tools": [{"name": "Bash", "description": "Runs commands"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "opening " + RULE}]},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": [{"type": "tool_result", "content": "cat AGENTS.md"}]},
            {"role": "user", "content": "later user text"},
        ],
    }
    context = request_context(anthropic)
    assert "sys" in context and "Runs commands" in context and "opening" in context
    assert "later user text" not in context and "cat AGENTS.md" not in context
    # The file's text only in a tool result (the agent cat'ed it) is not loading it.
    read_only: JsonValue = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": RULE},
        ]
    }
    assert loaded_from_requests([AGENTS], [request_context(read_only)])[0].loaded is False
    responses: JsonValue = {
        "instructions": "base",
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "dev"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "# AGENTS.md"}]},
            {"type": "function_call", "name": "exec_command", "arguments": "{}"},
            {"type": "function_call_output", "output": "secret tool output"},
        ],
    }
    assert request_context(responses).split("\n") == ["base", "dev", "# AGENTS.md"]
    chat: JsonValue = {
        "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
        "tools": [{"type": "function", "function": {"name": "bash", "description": "D"}}],
    }
    assert request_context(chat).split("\n") == ["bash", "D", "S", "U"]
    assert request_context("not an object") == ""
    assert request_context({"input": "just text"}) == "just text"


@given(
    words=st.lists(st.text(alphabet="abc XYZ.", min_size=1, max_size=8), min_size=1, max_size=6),
    noise=st.text(alphabet="abc \n\t", max_size=20),
    gaps=st.lists(st.sampled_from([" ", "\n", "\t ", "  \n  "]), min_size=6, max_size=6),
)
def test_rewrapping_never_hides_a_file_and_a_missing_one_is_never_found(
    words: list[str], noise: str, gaps: list[str]
) -> None:
    text = " ".join(words)
    declared = DeclaredInput.instruction_file("AGENTS.md", "0" * 64, text)
    rewrapped = "".join(word + gap for word, gap in zip(words, gaps, strict=False))
    if declared.needles:
        assert loaded_from_requests([declared], [noise + "\n" + rewrapped])[0].loaded is True
        tracker = LoadTracker([declared])
        tracker.see(noise.replace(declared.needles[0], ""))
        if declared.needles[0] not in " ".join(noise.split()):
            assert tracker.result(audited=True)[0].loaded is False
        assert tracker.result(audited=False)[0].loaded is None


def test_rows_round_trip_through_the_strict_codec() -> None:
    result = AgentResult(
        agent_name="x",
        agent_version=None,
        success=True,
        error=None,
        stop_reason="completed",
        instructions_loaded=loaded_from_requests([AGENTS, SKILL], [RULE]),
    )
    data = json.loads(json.dumps(dump_result(result)))
    assert data["instructions_loaded"][0] == {
        "path": "AGENTS.md",
        "kind": "instructions",
        "sha256": "ab" * 32,
        "loaded": True,
    }
    assert data["instructions_loaded"][1]["loaded"] is False
    assert load_result(data) == result


def test_a_text_two_files_share_counts_only_under_its_own_name() -> None:
    shared = dataclasses.replace(AGENTS, named="AGENTS.md", shared_with=("CLAUDE.md",))
    under_claude = "Contents of /sandbox/CLAUDE.md (project instructions):\n\n" + RULE
    under_agents = "# AGENTS.md instructions for /sandbox\n\n<INSTRUCTIONS>\n" + RULE + "\n</INSTRUCTIONS>"
    assert loaded_from_requests([shared], [under_claude])[0].loaded is False
    assert loaded_from_requests([shared], [under_claude, under_agents])[0].loaded is True
    assert loaded_from_requests([shared], [under_agents, under_claude])[0].loaded is True
    # No name beside the text: either file may have been sent, so nobody knows.
    assert loaded_from_requests([shared], ["<instructions>" + RULE + "</instructions>"])[0].loaded is None
    # A name too far before the text is no heading of it.
    far = "AGENTS.md " + "x" * 500 + RULE
    assert loaded_from_requests([shared], [far])[0].loaded is None
    # The plain input (no other file shares its text) is decided by its text alone, as before.
    assert loaded_from_requests([AGENTS], [under_claude])[0].loaded is True


@given(st.lists(st.sampled_from(["CLAUDE.md", "AGENTS.md", "", "intro", RULE, "\n"]), max_size=8))
def test_a_shared_text_is_never_loaded_without_its_own_name_before_it(parts: list[str]) -> None:
    shared = dataclasses.replace(AGENTS, named="AGENTS.md", shared_with=("CLAUDE.md",))
    text = " ".join(parts)
    decided = loaded_from_requests([shared], [text])[0].loaded
    normalized = " ".join(text.split())
    rule = " ".join(RULE.split())
    starts = [i for i in range(len(normalized)) if normalized.startswith(rule, i)]
    if decided is True:
        assert any("AGENTS.md" in normalized[max(0, i - 400) : i] for i in starts)
    if not starts:
        assert decided is False
