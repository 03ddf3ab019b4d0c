"""Run a coroutine to its end from synchronous code, whether or not the caller is inside an event loop.

``asyncio.run`` refuses to start while a loop runs in the calling thread, which is where a notebook, an
async test or an async application calls trialbook's synchronous functions from. There the coroutine
runs on a fresh loop in a thread of its own (with the caller's context), and the caller's loop, its
default executor included, is left as it was.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Coroutine
from typing import Any, Generic, TypeVar

__all__ = ["run_blocking"]

_T = TypeVar("_T")


class _Boxed(Generic[_T]):
    """A coroutine's result, held where ``repr`` does not look.

    When ``asyncio.run`` ends it asks ``signal.getsignal`` for the SIGINT handler it set, a partial
    naming the main task; on Python 3.11 that call formats the handler, so the finished task, so its
    result, into an error it then drops. A run's result holds every trial's outcome, and that repr
    cost milliseconds per hundred trials; a box costs nothing to show.
    """

    __slots__ = ("value",)

    def __init__(self, value: _T) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<result>"


async def _boxed(coro: Coroutine[Any, Any, _T]) -> _Boxed[_T]:
    return _Boxed(await coro)


def run_blocking(coro: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run(coro)``, on a fresh thread when a loop already runs in this one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_boxed(coro)).value
    context = contextvars.copy_context()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="trialbook-run") as pool:
        return pool.submit(context.run, asyncio.run, _boxed(coro)).result().value
