"""Whether a trial loaded the compared inputs, from its ``instructions_loaded`` evidence (pure)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from trialbook.evidence import AgentResult, InstructionLoad
from trialbook.runner._arms import trial_loaded


def _result(*loads: InstructionLoad) -> AgentResult:
    return AgentResult(
        agent_name="test",
        agent_version=None,
        success=True,
        error=None,
        stop_reason="completed",
        instructions_loaded=loads,
    )


def _file(path: str, loaded: bool | None) -> InstructionLoad:
    return InstructionLoad(path=path, kind="instructions", sha256="0" * 64, loaded=loaded)


def _skill(path: str, loaded: bool | None) -> InstructionLoad:
    return InstructionLoad(path=path, kind="skill", sha256="0" * 64, loaded=loaded)


def test_every_compared_input_must_have_loaded() -> None:
    both = _result(_file("AGENTS.md", True), _skill(".claude/skills/deploy-app", True))
    assert trial_loaded(both, ["AGENTS.md", "deploy-app"]) is True
    one_missed = _result(_file("AGENTS.md", True), _skill(".agents/skills/deploy-app", False))
    assert trial_loaded(one_missed, ["AGENTS.md", "deploy-app"]) is False


def test_an_input_not_compared_does_not_count() -> None:
    result = _result(_file("AGENTS.md", True), _file("CLAUDE.md", False))
    assert trial_loaded(result, ["AGENTS.md"]) is True


def test_no_audit_is_unknown_never_loaded() -> None:
    assert trial_loaded(_result(_file("AGENTS.md", None)), ["AGENTS.md"]) is None
    assert trial_loaded(_result(), ["AGENTS.md"]) is None
    # Known for one input, unknown for the other: not known to have loaded them all.
    assert (
        trial_loaded(_result(_file("AGENTS.md", True), _file("CLAUDE.md", None)), ["AGENTS.md", "CLAUDE.md"])
        is None
    )


@given(st.lists(st.sampled_from([True, False, None]), min_size=1, max_size=6))
def test_true_only_when_all_true_false_when_any_false(states: list[bool | None]) -> None:
    names = [f"dir{n}/AGENTS.md" for n in range(len(states))]
    result = _result(*(_file(name, state) for name, state in zip(names, states, strict=True)))
    found = trial_loaded(result, names)
    if False in states:
        assert found is False
    elif all(states):
        assert found is True
    else:
        assert found is None
