"""Copilot's own skill-load diagnostics on the real CLI: a broken SKILL.md says why, in the evidence."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.fakes.openai_chat import ChatServer, text
from trialbook.agents.copilot import CopilotAgent, CopilotEval, ServerPool
from trialbook.agents.copilot._skills import discover_skills
from trialbook.evidence import CopilotResult, dump_result, load_result

from .conftest import MiniSandbox

pytestmark = [pytest.mark.real_cli, pytest.mark.asyncio(loop_scope="module")]


def skill(root: Path, name: str, text: str) -> Path:
    (root / name).mkdir(parents=True)
    path = root / name / "SKILL.md"
    path.write_text(text)
    return path


async def run_with(
    cli: str, server: ChatServer, pool: ServerPool, skills: Path, box: MiniSandbox, pkg_cache: str
) -> CopilotResult:
    config = CopilotEval(
        model="fake-model", provider=server.provider(), cli_path=cli, skill_directories=(str(skills),)
    )
    return await CopilotAgent(config, environ={}, pool=pool).run(box.task("use the skills", pkg_cache))


async def test_a_broken_front_matter_carries_copilots_own_diagnostic(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    skill(skills, "good", "---\nname: good\ndescription: Fine\n---\nBody.\n")
    broken = skill(skills, "broken", "---\nname: broken\ndescription: [unclosed\n---\nBody.\n")
    with ChatServer([text("should never be asked")]) as server:
        result = await run_with(copilot_cli, server, shared_pool, skills, shared_box, pkg_cache)
        assert server.requests == [], "the trial stopped before any model request"
    assert result.success is False and result.stop_reason == "execution_error"
    discovery = result.skill_discovery
    assert discovery is not None and discovery.complete
    assert [s.name for s in discovery.skills] == ["good"]
    [error] = discovery.errors
    assert error.startswith(f"skill 'broken' ({broken}) is not listed by Copilot; Copilot reported: ")
    assert "failed to parse YAML frontmatter" in error and "broken/SKILL.md" in error
    assert result.error is not None and "failed to parse YAML frontmatter" in result.error
    saved = json.loads(json.dumps(dump_result(result)))
    assert "failed to parse YAML frontmatter" in json.dumps(saved["skill_discovery"])
    assert load_result(saved) == result


async def test_each_broken_skill_carries_its_own_diagnostic_and_no_other(
    copilot_cli: str, pkg_cache: str, shared_box: MiniSandbox, shared_pool: ServerPool, tmp_path: Path
) -> None:
    skills = tmp_path / "skills"
    skill(skills, "yaml", "---\nname: yaml\ndescription: [unclosed\n---\nBody.\n")
    skill(skills, "yaml-two", "no front matter at all\n")  # a name that the first one's path prefixes
    with ChatServer([text("should never be asked")]) as server:
        result = await run_with(copilot_cli, server, shared_pool, skills, shared_box, pkg_cache)
    assert result.skill_discovery is not None
    errors = dict(zip(("yaml", "yaml-two"), result.skill_discovery.errors, strict=True))
    assert "failed to parse YAML frontmatter" in errors["yaml"]
    assert "missing or malformed YAML frontmatter" not in errors["yaml"]
    assert "missing or malformed YAML frontmatter" in errors["yaml-two"]
    assert "failed to parse" not in errors["yaml-two"]


class _Rpc:
    """The two SDK calls discovery makes, answering as a CLI would for a file outside the directories."""

    def __init__(self, reload: object) -> None:
        self.skills = self
        self._reload = reload

    async def reload(self) -> object:
        if isinstance(self._reload, Exception):
            raise self._reload
        return self._reload

    async def list(self) -> object:
        return SimpleNamespace(skills=[])


async def test_other_files_diagnostics_are_warnings_and_a_missing_reload_is_said(tmp_path: Path) -> None:
    # Offline, the real CLI only diagnoses the explicit directories, so these two routes need a stand-in.
    skills = tmp_path / "skills"
    skills.mkdir()
    message = "elsewhere/x/SKILL.md: missing or malformed YAML frontmatter"
    found = await discover_skills(
        SimpleNamespace(rpc=_Rpc(SimpleNamespace(errors=[message], warnings=[]))), (str(skills),), ()
    )
    assert found.errors == ()
    assert found.warnings == (f"Copilot reported: {message}",)
    broken_rpc = _Rpc(RuntimeError("Unhandled method"))
    missing = await discover_skills(SimpleNamespace(rpc=broken_rpc), (str(skills),), ())
    assert missing.complete and missing.errors == ()
    assert missing.warnings == ("Copilot's skill diagnostics are unavailable: Unhandled method",)
