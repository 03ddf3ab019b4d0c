"""Re-record the Copilot event sequences in tests/data/copilot from the real pinned CLI.

Run ``uv run --frozen python -m tests.agents.copilot.record_events`` after a CLI upgrade. Bulky events the
mapper does not read (model-layer snapshots) are dropped and long system text is cut, so the recordings
stay small; everything else is kept exactly as the SDK delivered it.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from copilot import define_tool
from pydantic import BaseModel

from tests.clis import CACHE, ensure_cli
from tests.fakes.openai_chat import ChatServer, Reply, call, position, text
from trialbook.agents import AgentTask
from trialbook.agents.copilot import CopilotAgent, CopilotEval

DATA = Path(__file__).resolve().parents[2] / "data" / "copilot"
_DROP = (
    "model.messages_snapshot",
    "model.message",
    "model.tool_execution",
    "model.turn_started",
    "model.turn_ended",
    "model.model_call_started",
    "model.model_call_success",
)


class Numbers(BaseModel):
    x: int


async def _hang(params: Numbers) -> str:
    await asyncio.sleep(3600)
    return "never"


async def record(
    name: str, script: Sequence[Reply] | Callable[[dict[str, Any]], Reply], **options: Any
) -> None:
    root = Path(tempfile.mkdtemp(prefix=f"copilot-record-{name}-"))
    for sub in ("work", "home", "out"):
        (root / sub).mkdir()
    with ChatServer(script) as server:
        config = CopilotEval(
            model="fake-model",
            provider=server.provider(),
            cli_path=str(ensure_cli("@github/copilot")),
            **options,
        )
        agent = CopilotAgent(config, environ={})
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(root / "home"),
            "COPILOT_PKG_CACHE_HOME": str(CACHE / "copilot-pkg"),
        }
        task = AgentTask(
            prompt="recorded", workdir=root / "work", home=root / "home", env=env, output_dir=root / "out"
        )
        try:
            await agent.run(task)
        finally:
            await agent.aclose()
    kept = []
    for line in (root / "out" / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["type"] in _DROP:
            continue
        if event["type"] == "system.message":
            event["data"]["content"] = event["data"]["content"][:200]
        kept.append(json.dumps(event, sort_keys=True))
    (DATA / f"{name}.jsonl").write_text("\n".join(kept) + "\n")


async def main() -> None:
    DATA.mkdir(parents=True, exist_ok=True)
    await record("bash", [call("bash", command="echo hi > hi.txt", description="x"), text("done")])
    hang = define_tool("wait", description="waits", handler=lambda p, _inv: _hang(p), params_type=Numbers)
    await record("timeout", [call("wait", x=1), text("never")], tools=(hang,), timeout_s=3)
    checker = {"name": "checker", "description": "checks", "prompt": "You check things.", "tools": ["bash"]}
    await record("subagent", _delegating, custom_agents=(checker,))


def _delegating(body: dict[str, Any]) -> Reply:
    n = position(body)
    if str(body["messages"][0]["content"]).startswith("You check things."):
        return [call("bash", command="echo child", description="x"), text("child done")][n]
    return [
        call("task", description="check", prompt="check it", agent_type="checker", name="c1"),
        text("parent done"),
    ][n]


if __name__ == "__main__":
    asyncio.run(main())
