"""``start_now``: a coroutine's first step runs in the caller's turn, and the rest still finishes.

Each test also runs ``asyncio.ensure_future`` the same way where the difference is the point: the
guarantee is that nothing else ready on the loop runs before the first step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import pytest

from trialbook._tasks import start_now

Starter = Callable[[Coroutine[Any, Any, Any]], "asyncio.Future[Any]"]


async def _first_step_order(starter: Starter) -> list[str]:
    seen: list[str] = []

    async def work() -> str:
        seen.append("first step")
        await asyncio.sleep(0)
        seen.append("second step")
        return "done"

    asyncio.get_running_loop().call_soon(seen.append, "other ready work")
    started = starter(work())
    seen.append("caller goes on")
    assert await started == "done"
    return seen


def test_the_first_step_runs_before_anything_else_ready() -> None:
    order = asyncio.run(_first_step_order(start_now))
    assert order[:3] == ["first step", "caller goes on", "other ready work"]
    assert order[-1] == "second step"


def test_ensure_future_runs_it_after_what_was_ready() -> None:
    # What start_now is for: the same coroutine under ensure_future waits behind the ready callback.
    order = asyncio.run(_first_step_order(asyncio.ensure_future))
    assert order[:2] == ["caller goes on", "other ready work"]


def test_a_coroutine_that_waits_on_a_future_gets_its_value() -> None:
    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        gate: asyncio.Future[int] = loop.create_future()

        async def work() -> int:
            first = await gate
            second = await asyncio.sleep(0.01, result=2)
            return first + second

        started = start_now(work())
        assert not started.done()
        loop.call_later(0.01, gate.set_result, 40)
        return await started, 42

    got, expected = asyncio.run(main())
    assert got == expected


def test_results_and_errors_come_through_at_every_step() -> None:
    async def at_once() -> str:
        return "no wait"

    async def fails_first() -> None:
        raise ValueError("at once")

    async def fails_later() -> None:
        await asyncio.sleep(0)
        raise KeyError("later")

    async def main() -> None:
        assert await start_now(at_once()) == "no wait"
        with pytest.raises(ValueError, match="at once"):
            await start_now(fails_first())
        with pytest.raises(KeyError, match="later"):
            await start_now(fails_later())

    asyncio.run(main())


def test_a_shielded_start_survives_the_callers_cancellation() -> None:
    # As run_process uses it: the caller is cancelled mid-start, the start still runs to its end.
    async def main() -> list[str]:
        seen: list[str] = []

        async def work() -> str:
            seen.append("started")
            await asyncio.sleep(0.05)
            seen.append("finished")
            return "ok"

        started = start_now(work())

        async def caller() -> None:
            await asyncio.shield(started)

        waiting = asyncio.ensure_future(caller())
        await asyncio.sleep(0.01)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert await started == "ok"
        return seen

    assert asyncio.run(main()) == ["started", "finished"]


def test_a_task_cancelled_while_it_runs_reports_cancelled() -> None:
    async def main() -> bool:
        async def work() -> None:
            await asyncio.sleep(0)
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            await asyncio.sleep(1)

        started = start_now(work())
        with pytest.raises(asyncio.CancelledError):
            await started
        return started.cancelled()

    assert asyncio.run(main()) is True
