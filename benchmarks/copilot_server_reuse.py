"""How much one shared Copilot CLI server saves against a CLI per trial.

Runs the same short scripted trial N times against a loopback model, once with one server reused by
every trial (sessions stay separate) and once with a server started and stopped per trial. Both use the
real pinned CLI from npm. Usage::

    uv run --frozen python -m benchmarks.copilot_server_reuse [TRIALS]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from tests.clis import CACHE, ensure_cli
from tests.fakes.openai_chat import ChatServer, call, text

from trialbook.agents import AgentTask
from trialbook.agents.copilot import CopilotAgent, CopilotEval


async def trials(count: int, *, reuse: bool) -> tuple[float, int]:
    root = Path(tempfile.mkdtemp(prefix="copilot-bench-"))
    (root / "home").mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(root / "home"),
        "COPILOT_PKG_CACHE_HOME": str(CACHE / "copilot-pkg"),
    }
    script = [call("bash", command="echo hi > hi.txt", description="x"), text("done")]
    with ChatServer(script) as server:
        config = CopilotEval(
            model="fake-model", provider=server.provider(), cli_path=str(ensure_cli("@github/copilot"))
        )
        agent = CopilotAgent(config, environ={}, max_idle_servers=1 if reuse else 0)
        started = time.monotonic()
        try:
            for n in range(count):
                work = root / f"work-{n}"
                work.mkdir()
                task = AgentTask(
                    prompt="go", workdir=work, home=root / "home", env=env, output_dir=root / f"out-{n}"
                )
                result = await agent.run(task)
                if not result.success:
                    raise SystemExit(f"trial {n} failed: {result.error}")
        finally:
            await agent.aclose()
        return time.monotonic() - started, agent.pool.started


async def main(count: int) -> None:
    await trials(1, reuse=True)  # warm the runtime cache so neither side pays for unpacking
    shared, shared_starts = await trials(count, reuse=True)
    fresh, fresh_starts = await trials(count, reuse=False)
    print(f"{count} trials, one shared CLI server: {shared:.2f} s ({shared_starts} server start)")
    print(f"{count} trials, one CLI server each:   {fresh:.2f} s ({fresh_starts} server starts)")
    print(f"saved per trial: {(fresh - shared) / count * 1000:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
